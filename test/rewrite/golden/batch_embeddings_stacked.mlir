"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x2xi64>, %arg1: tensor<?x2xi64>, %arg2: tensor<3x?xi64>):
    %0 = "cagr.unsqueeze"(%arg0) {name = "tbe.ids.0", axes = [1]} : (tensor<?x2xi64>) -> tensor<?x1x2xi64>
    %1 = "cagr.unsqueeze"(%arg1) {name = "tbe.ids.1", axes = [1]} : (tensor<?x2xi64>) -> tensor<?x1x2xi64>
    %2 = "cagr.concat"(%0, %1) {name = "tbe.ids", axis = 1 : i64} : (tensor<?x1x2xi64>, tensor<?x1x2xi64>) -> tensor<?x2x2xi64>
    %3 = "cagr.constant"() {elided, name = "t0"} : () -> tensor<9x3xf32>
    %4 = "cagr.constant"() {elided, name = "t2"} : () -> tensor<9x3xf32>
    %5 = "cagr.constant"() {elided, name = "t1"} : () -> tensor<9x2xf32>
    %6 = "cagr.embedding_bags"(%3, %4, %5, %2) {name = "tbe", num_tables = 3 : i64, mode = "mean", slots = [0, 0, 1]} : (tensor<9x3xf32>, tensor<9x3xf32>, tensor<9x2xf32>, tensor<?x2x2xi64>) -> tensor<?x8xf32>
    %7 = "cagr.slice"(%6) {name = "tbe.slice.bag_a", starts = [0], ends = [3], axes = [1]} : (tensor<?x8xf32>) -> tensor<?x3xf32>
    %8 = "cagr.slice"(%6) {name = "tbe.slice.bag_a2", starts = [3], ends = [6], axes = [1]} : (tensor<?x8xf32>) -> tensor<?x3xf32>
    %9 = "cagr.slice"(%6) {name = "tbe.slice.bag_b", starts = [6], ends = [8], axes = [1]} : (tensor<?x8xf32>) -> tensor<?x2xf32>
    %10 = "cagr.constant"() {elided, name = "tbe.1.ids.slots"} : () -> tensor<2xi64>
    %11 = "cagr.gather"(%arg2, %10) {name = "tbe.1.ids", axis = 0 : i64} : (tensor<3x?xi64>, tensor<2xi64>) -> tensor<2x?xi64>
    %12 = "cagr.transpose"(%11) {name = "tbe.1.ids.transpose", perm = [1, 0]} : (tensor<2x?xi64>) -> tensor<?x2xi64>
    %13 = "cagr.constant"() {elided, name = "t3"} : () -> tensor<9x2xf32>
    %14 = "cagr.constant"() {elided, name = "t4"} : () -> tensor<9x2xf32>
    %15 = "cagr.embedding_bags"(%13, %14, %12) {name = "tbe.1", num_tables = 2 : i64, mode = "sum"} : (tensor<9x2xf32>, tensor<9x2xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %16 = "cagr.slice"(%15) {name = "tbe.1.slice.lookup_r0", starts = [0], ends = [2], axes = [1]} : (tensor<?x4xf32>) -> tensor<?x2xf32>
    %17 = "cagr.add"(%9, %16) {name = "sum_b"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %18 = "cagr.slice"(%15) {name = "tbe.1.slice.lookup_r2", starts = [2], ends = [4], axes = [1]} : (tensor<?x4xf32>) -> tensor<?x2xf32>
    %19 = "cagr.mul"(%17, %18) {name = "mul_r2"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %20 = "cagr.concat"(%7, %19, %8) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x8xf32>
    "cagr.return"(%20) : (tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["a", "b", "rows"], input_dims = ["N,2", "N,2", "3,N"], output_names = ["z"], symbols = ["N"]} : () -> ()
}) : () -> ()
