"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x3xf32>):
    %0 = "cagr.constant"() {elided, name = "fc.weight.bn_folded"} : () -> tensor<4x3xf32>
    %1 = "cagr.constant"() {elided, name = "bn.folded_bias"} : () -> tensor<4xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc", transB = 1 : i64, alpha = 0.5 : f64, result_names = ["bn"]} : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.relu"(%2) {name = "act"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%3) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,3"], output_names = ["out"], symbols = ["N"]} : () -> ()
}) : () -> ()
