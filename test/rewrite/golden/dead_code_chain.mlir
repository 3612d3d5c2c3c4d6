"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>):
    %0 = "cagr.relu"(%arg0) {name = "keep"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.neg"(%0) {name = "out"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%1) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
