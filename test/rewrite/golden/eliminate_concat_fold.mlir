"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x12xf32>, %arg1: tensor<?x3xf32>):
    %0 = "cagr.relu"(%arg0) {name = "x"} : (tensor<?x12xf32>) -> tensor<?x12xf32>
    %1 = "cagr.slice"(%0) {name = "s0", starts = [0], ends = [4], axes = [1]} : (tensor<?x12xf32>) -> tensor<?x4xf32>
    %2 = "cagr.slice"(%0) {name = "s2", starts = [8], ends = [12], axes = [-1]} : (tensor<?x12xf32>) -> tensor<?x4xf32>
    %3 = "cagr.concat"(%1, %2) {name = "gap", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %4 = "cagr.reshape"(%0) {name = "stack.fold.reshape", shape = [0, 3, 4]} : (tensor<?x12xf32>) -> tensor<?x3x4xf32>
    %5 = "cagr.fm"(%4) {name = "fm"} : (tensor<?x3x4xf32>) -> tensor<?x1xf32>
    %6 = "cagr.slice"(%0) {name = "cat.fold", starts = [4], ends = [12], axes = [1]} : (tensor<?x12xf32>) -> tensor<?x8xf32>
    %7 = "cagr.concat"(%arg1, %6) {name = "cat", axis = -1 : i64} : (tensor<?x3xf32>, tensor<?x8xf32>) -> tensor<?x11xf32>
    %8 = "cagr.reduce_sum"(%7) {name = "sum", axes = [1], keepdims = 1 : i64} : (tensor<?x11xf32>) -> tensor<?x1xf32>
    %9 = "cagr.add"(%5, %8) {name = "y"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%9, %3) : (tensor<?x1xf32>, tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["dense", "extra"], input_dims = ["N,12", "N,3"], output_names = ["y", "gap"], symbols = ["N"]} : () -> ()
}) : () -> ()
