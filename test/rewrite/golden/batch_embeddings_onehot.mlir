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
    %7 = "cagr.slice"(%6) {name = "tbe.slice.lookup_emb0", starts = [0], ends = [4], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x4xf32>
    %8 = "cagr.unsqueeze"(%7) {name = "u0", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %9 = "cagr.slice"(%6) {name = "tbe.slice.lookup_emb1", starts = [4], ends = [8], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x4xf32>
    %10 = "cagr.unsqueeze"(%9) {name = "u1", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %11 = "cagr.concat"(%8, %10) {name = "stack", axis = 1 : i64} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
    %12 = "cagr.fm"(%11) {name = "fm"} : (tensor<?x2x4xf32>) -> tensor<?x1xf32>
    %13 = "cagr.slice"(%6) {name = "tbe.slice.lookup_lin0", starts = [8], ends = [9], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x1xf32>
    %14 = "cagr.slice"(%6) {name = "tbe.slice.lookup_lin1", starts = [9], ends = [10], axes = [1]} : (tensor<?x10xf32>) -> tensor<?x1xf32>
    %15 = "cagr.concat"(%13, %14) {name = "cat", axis = 1 : i64} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
    %16 = "cagr.reduce_sum"(%15) {name = "linear", axes = [1], keepdims = 1 : i64} : (tensor<?x2xf32>) -> tensor<?x1xf32>
    %17 = "cagr.add"(%12, %16) {name = "logit"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%17) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["sparse"], input_dims = ["N,3"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
