"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>):
    %0 = "cagr.constant"() {elided, name = "w1"} : () -> tensor<2x4xf32>
    %1 = "cagr.constant"() {elided, name = "b1"} : () -> tensor<2xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64, cagr.group = 0 : i64, cagr.kernel = "own.gemm"} : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %3 = "cagr.relu"(%2) {name = "relu1", cagr.group = 0 : i64, cagr.kernel = "own.gemm"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %4 = "cagr.reshape"(%3) {name = "view", shape = [-1, 1, 2]} : (tensor<?x2xf32>) -> tensor<?x1x2xf32>
    %5 = "cagr.concat"(%4, %4) {name = "stack", axis = 1 : i64} : (tensor<?x1x2xf32>, tensor<?x1x2xf32>) -> tensor<?x2x2xf32>
    %6 = "cagr.interaction"(%5) {name = "dot"} : (tensor<?x2x2xf32>) -> tensor<?x1xf32>
    %7 = "cagr.sigmoid"(%6) {name = "prob"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%7) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
