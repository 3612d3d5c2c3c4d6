"""Where CAGR's time goes, for bench/cpu/run.py: one extra `cagr bench
--breakdown --json` run per model x batch (its own process, so the timed run's
peak RSS is not touched), reduced to the largest kernels of the optimized plan
with their share of the summed per-kernel time (measured on this host), and
the Markdown lines the report prints under each case."""
import json
import subprocess

TOP = 6


def cagr_breakdown(cmd, env, timeout, preexec_fn=None):
    """Runs `cmd` (a `cagr bench ... --json` command line) with --breakdown;
    returns {"kernels": [...], "total_ms", "repeats", "command"} or {"error"}."""
    full = list(cmd) + ["--breakdown"]
    try:
        p = subprocess.run(full, capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=preexec_fn)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"breakdown run failed: {e}"}
    if p.returncode != 0:
        return {"error": f"breakdown rc {p.returncode}: " + (p.stderr.strip() or p.stdout.strip())[-300:]}
    try:
        j = json.loads(p.stdout[p.stdout.index("{"):])
        b = j["breakdown"]["optimized"]
    except (ValueError, KeyError) as e:
        return {"error": f"could not read the breakdown JSON ({e})"}
    total = float(b["total_ms"]) or 1.0
    kernels = [{"kernel": k["kernel"], "count": k["count"], "ms": k["ms"], "cpu_ms": k["cpu_ms"],
                "share": k["ms"] / total, "gflops": k["flops"] / (k["ms"] * 1e6) if k["ms"] > 0 else 0.0}
               for k in b["by_kernel"]]
    return {"kernels": kernels, "total_ms": b["total_ms"], "repeats": b["repeats"],
            "kind": b.get("kind", "measured per kernel"), "command": " ".join(full)}


def breakdown_md(bd, top=TOP):
    """Markdown lines for one case (empty when there is no breakdown)."""
    if not bd:
        return []
    if "error" in bd:
        return [f"Where CAGR's time goes: not available ({bd['error']})", ""]
    L = [f"Where CAGR's time goes (optimized plan; each kernel timed apart, median of {bd['repeats']} runs, "
         f"measured; sum of kernels {bd['total_ms']:.3f} ms; GFLOP/s from op-table FLOP counts):", "",
         "| kernel | count | ms | share | GFLOP/s |", "| --- | ---: | ---: | ---: | ---: |"]
    for k in bd["kernels"][:top]:
        L.append(f"| `{k['kernel']}` | {k['count']} | {k['ms']:.3f} | {100 * k['share']:.1f} % | "
                 f"{k['gflops']:.1f} |")
    rest = bd["kernels"][top:]
    if rest:
        L.append(f"| {len(rest)} other kernels | {sum(k['count'] for k in rest)} | {sum(k['ms'] for k in rest):.3f} "
                 f"| {100 * sum(k['share'] for k in rest):.1f} % | |")
    return L + [""]
