"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>):
    %0 = "cagr.constant"() {elided, name = "e"} : () -> tensor<4xf32>
    %1 = "cagr.add"(%arg0, %0) {name = "shifted"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.constant"() {elided, name = "k"} : () -> tensor<4xf32>
    "cagr.return"(%1, %2) : (tensor<?x4xf32>, tensor<4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y", "k"], symbols = ["N"]} : () -> ()
}) : () -> ()
