"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x3xi64>):
    %0 = "cagr.constant"() {elided, name = "tbe.ids.slots"} : () -> tensor<2xi64>
    %1 = "cagr.gather"(%arg0, %0) {name = "tbe.ids", axis = 1 : i64} : (tensor<?x3xi64>, tensor<2xi64>) -> tensor<?x2xi64>
    %2 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<10x4xf32>
    %3 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<12x4xf32>
    %4 = "cagr.constant"() {elided, name = "lin0"} : () -> tensor<10x1xf32>
    %5 = "cagr.constant"() {elided, name = "lin1"} : () -> tensor<12x1xf32>
    %6 = "cagr.embedding_bags"(%2, %3, %4, %5, %1) {name = "tbe", num_tables = 4 : i64, mode = "sum", slots = [0, 1, 0, 1]} : (tensor<10x4xf32>, tensor<12x4xf32>, tensor<10x1xf32>, tensor<12x1xf32>, tensor<?x2xi64>) -> tensor<?x10xf32>
    %7 = "cagr.slice"(%6) {name = "stack.fold", starts = [0], ends = [8], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x8xf32>
    %8 = "cagr.reshape"(%7) {name = "stack.fold.reshape", shape = [0, 2, 4]} : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
    %9 = "cagr.fm"(%8) {name = "fm"} : (tensor<?x2x4xf32>) -> tensor<?x1xf32>
    %10 = "cagr.slice"(%6) {name = "cat.fold", starts = [8], ends = [10], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x2xf32>
    %11 = "cagr.reduce_sum"(%10) {name = "linear", axes = [1], keepdims = 1 : i64} : (tensor<?x2xf32>) -> tensor<?x1xf32>
    %12 = "cagr.add"(%9, %11) {name = "logit"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%12) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["sparse"], input_dims = ["N,3"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
