"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<2x?xi64>, %arg1: tensor<2x?xi64>, %arg2: tensor<?x2xi64>, %arg3: tensor<?x2xf32>):
    %0 = "cagr.constant"() {elided, name = "emb2"} : () -> tensor<8x4xf32>
    %1 = "cagr.embedding_bag"(%0, %arg2) {name = "bag_max", mode = "max"} : (tensor<8x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %2 = "cagr.constant"() {elided, name = "emb3"} : () -> tensor<8x4xf32>
    %3 = "cagr.embedding_bag"(%2, %arg2, %arg3) {name = "bag_weighted", operand_mask = [1, 1, 0, 1]} : (tensor<8x4xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x4xf32>
    %4 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<10x4xf32>
    %5 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<8x4xf32>
    %6 = "cagr.embedding_bags"(%4, %5, %arg0, %arg1) {name = "tbe", num_tables = 2 : i64, mode = "sum"} : (tensor<10x4xf32>, tensor<8x4xf32>, tensor<2x?xi64>, tensor<2x?xi64>) -> tensor<?x8xf32>
    %7 = "cagr.slice"(%6) {name = "tbe.slice.bag1", starts = [4], ends = [8], axes = [1]} : (tensor<?x8xf32>) -> tensor<?x4xf32>
    %8 = "cagr.concat"(%6, %1, %3) {name = "cat", axis = 1 : i64} : (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
    "cagr.return"(%8, %7) : (tensor<?x16xf32>, tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["sparse_indices", "sparse_offsets", "ids", "psw"], input_dims = ["2,L", "2,N", "N,2", "N,2"], output_names = ["z", "bag1_out"], symbols = ["N", "L"]} : () -> ()
}) : () -> ()
