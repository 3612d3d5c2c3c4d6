"""Host facts for bench/cpu/run.py: the measured host profile's peaks, whether
it was measured on this CPU, library versions and the machine description."""
import importlib.metadata
import json
import os
import platform
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def host_profile(path):
    try:
        d = json.load(open(path))
        pf = d["peak_flops"]["fp32"]
        mem = d["memory"][-1]
        return {"path": os.path.relpath(path, ROOT), "peak_flops": float(pf["value"]),
                "peak_flops_source": pf.get("source", ""), "level": mem["name"],
                "bandwidth": float(mem["bandwidth"]["value"]), "bandwidth_source": mem["bandwidth"].get("source", ""),
                "date": d.get("date"), "measured_on": d.get("measured_on"), "vendor": d.get("vendor", "")}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def same_cpu(hw, cpu):
    """Whether the profile's vendor (e.g. 'amd-cpu') matches this host's CPU name."""
    vendor = (hw.get("vendor") or "").split("-")[0].lower()
    where = (hw.get("measured_on") or "").lower()
    name = cpu.lower()
    if vendor in ("amd", "intel"):
        return vendor in name
    return not (("epyc" in where or "amd" in where) and "intel" in name)


def versions():
    out = {"python": platform.python_version()}
    for pkg in ["numpy", "torch", "onnx", "onnxruntime", "apache-tvm", "matplotlib"]:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        out["cagr"] = rev.stdout.strip() + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        out["cagr"] = "unknown"
    return out


def host_info():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        pass
    return {"hostname": platform.node(), "cpu": cpu, "cores_online": os.cpu_count(),
            "memory_gib": round(mem / 2**30, 1), "kernel": platform.release()}
