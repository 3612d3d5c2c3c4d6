"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?xi64>, %arg1: tensor<10x4xf32>, %arg2: tensor<?x6xf32>):
    %0 = "cagr.gather"(%arg1, %arg0) {name = "emb", cagr.group = 0 : i64} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %1 = "cagr.reshape"(%0) {name = "view", shape = [-1, 2, 2], cagr.group = 0 : i64} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
    %2 = "cagr.relu"(%1) {name = "act", cagr.group = 0 : i64} : (tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
    %3 = "cagr.constant"() {elided, name = "bn.scale"} : () -> tensor<2xf32>
    %4 = "cagr.constant"() {elided, name = "bn.bias"} : () -> tensor<2xf32>
    %5 = "cagr.constant"() {elided, name = "bn.mean"} : () -> tensor<2xf32>
    %6 = "cagr.constant"() {elided, name = "bn.var"} : () -> tensor<2xf32>
    %7 = "cagr.batch_norm"(%2, %3, %4, %5, %6) {name = "bn", cagr.group = 0 : i64} : (tensor<?x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x2xf32>
    %8 = "cagr.mul"(%arg2, %arg2) {name = "sq", cagr.group = 1 : i64} : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %9 = "cagr.reduce_sum"(%8) {name = "sum", axes = [1], cagr.group = 1 : i64} : (tensor<?x6xf32>) -> tensor<?x1xf32>
    %10 = "cagr.exp"(%9) {name = "after"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%7, %10) : (tensor<?x2x2xf32>, tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["ids", "table", "x"], input_dims = ["N", "10,4", "N,6"], output_names = ["e", "r"], symbols = ["N"]} : () -> ()
}) : () -> ()
