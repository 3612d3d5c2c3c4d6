"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>):
    %0 = "cagr.relu"(%arg0) {name = "relu"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.sigmoid"(%arg1) {name = "sigmoid"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.concat"(%0, %1) {name = "cat", axis = 1 : i64, cagr.kernel = "own.concat_inplace"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %3 = "cagr.tanh"(%2) {name = "tanh"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    "cagr.return"(%3) : (tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "y"], input_dims = ["N,4", "N,4"], output_names = ["z"], symbols = ["N"]} : () -> ()
}) : () -> ()
