"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x3x4xf32>, %arg1: tensor<5x9xf32>, %arg2: tensor<2x15xf32>, %arg3: tensor<2xf32>):
    %0 = "cagr.cin"(%arg0, %arg0, %arg1) {name = "cin1", cagr.kernel = "own.cin"} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<5x9xf32>) -> tensor<?x5x4xf32>
    %1 = "cagr.relu"(%0) {name = "cin1_relu"} : (tensor<?x5x4xf32>) -> tensor<?x5x4xf32>
    %2 = "cagr.cin"(%1, %arg0, %arg2, %arg3) {name = "cin2", cagr.kernel = "own.cin"} : (tensor<?x5x4xf32>, tensor<?x3x4xf32>, tensor<2x15xf32>, tensor<2xf32>) -> tensor<?x2x4xf32>
    "cagr.return"(%2) : (tensor<?x2x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x0", "w1", "w2", "b2"], input_dims = ["N,3,4", "5,9", "2,15", "2"], output_names = ["out"], symbols = ["N"]} : () -> ()
}) : () -> ()
