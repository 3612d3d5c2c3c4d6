"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x2xf32>):
    %0 = "cagr.constant"() {elided, name = "w1"} : () -> tensor<2x2xf32>
    %1 = "cagr.matmul"(%arg0, %0) {name = "mm1"} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
    %2 = "cagr.relu"(%arg0) {name = "r1"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %3 = "cagr.sub"(%1, %1) {name = "diff"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %4 = "cagr.add"(%2, %2) {name = "twice"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %5 = "cagr.add"(%3, %4) {name = "total"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    "cagr.return"(%5, %2) : (tensor<?x2xf32>, tensor<?x2xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,2"], output_names = ["total", "act"], symbols = ["N"]} : () -> ()
}) : () -> ()
