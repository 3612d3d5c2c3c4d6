"""Engine names and labels, without torch (report.py and --merge need no GPU stack)."""

LABELS = {"eager": "PyTorch eager", "torchscript": "TorchScript (trace + freeze)",
          "compile": "torch.compile (default)", "compile_ro": "torch.compile reduce-overhead",
          "max_autotune": "torch.compile max-autotune", "cudagraph": "eager + CUDA Graph",
          "hand_graph": "hand-optimized, CUDA Graph", "hand_ro": "hand-optimized, compile reduce-overhead",
          "hand_eager": "hand-optimized, eager", "hand_compile": "hand-optimized, compile default",
          "cagr": "CAGR"}
FRAMEWORK_PEERS = ["eager", "torchscript", "compile", "compile_ro", "max_autotune", "cudagraph"]
