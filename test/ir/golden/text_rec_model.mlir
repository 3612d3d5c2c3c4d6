"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x13xf32>, %arg1: tensor<?xi64>, %arg2: tensor<?xi64>, %arg3: tensor<?x3xi64>, %arg4: tensor<?x3xf32>):
    %0 = "cagr.constant"() {elided, name = "fc1.weight"} : () -> tensor<8x13xf32>
    %1 = "cagr.constant"() {elided, name = "fc1.bias"} : () -> tensor<8xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64} : (tensor<?x13xf32>, tensor<8x13xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %3 = "cagr.clip"(%2) {name = "relu_clip", min = 0.0 : f64, max = 0x7FF0000000000000 : f64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %4 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<100x8xf32>
    %5 = "cagr.embedding_bag"(%4, %arg1, %arg2) {name = "bag0", mode = "sum"} : (tensor<100x8xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    %6 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<50x8xf32>
    %7 = "cagr.embedding_bag"(%6, %arg3, %arg4) {name = "bag1", operand_mask = [1, 1, 0, 1]} : (tensor<50x8xf32>, tensor<?x3xi64>, tensor<?x3xf32>) -> tensor<?x8xf32>
    %8 = "cagr.unsqueeze"(%3) {name = "u0", axes = [1]} : (tensor<?x8xf32>) -> tensor<?x1x8xf32>
    %9 = "cagr.unsqueeze"(%5) {name = "u1", axes = [1]} : (tensor<?x8xf32>) -> tensor<?x1x8xf32>
    %10 = "cagr.unsqueeze"(%7) {name = "u2", axes = [1]} : (tensor<?x8xf32>) -> tensor<?x1x8xf32>
    %11 = "cagr.concat"(%8, %9, %10) {name = "stack", axis = 1 : i64} : (tensor<?x1x8xf32>, tensor<?x1x8xf32>, tensor<?x1x8xf32>) -> tensor<?x3x8xf32>
    %12 = "cagr.interaction"(%11) {name = "interact"} : (tensor<?x3x8xf32>) -> tensor<?x3xf32>
    %13 = "cagr.concat"(%3, %12) {name = "cat", axis = -1 : i64} : (tensor<?x8xf32>, tensor<?x3xf32>) -> tensor<?x11xf32>
    %14 = "cagr.constant"() {elided, name = "top.weight"} : () -> tensor<6x11xf32>
    %15 = "cagr.gemm"(%13, %14) {name = "top", transB = 1 : i64, alpha = 0.5 : f64} : (tensor<?x11xf32>, tensor<6x11xf32>) -> tensor<?x6xf32>
    %16:3 = "cagr.split"(%15) {name = "heads", axis = 1 : i64, split = [1, 2, 3]} : (tensor<?x6xf32>) -> (tensor<?x1xf32>, tensor<?x2xf32>, tensor<?x3xf32>)
    %17 = "cagr.sigmoid"(%16#0) {name = "prob"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    %18 = "cagr.gelu"(%16#2) {name = "aux", approximate = "tanh"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "cagr.return"(%17, %18, %16#1) : (tensor<?x1xf32>, tensor<?x3xf32>, tensor<?x2xf32>) -> ()
  }) {sym_name = "main", input_names = ["dense", "ids", "offsets", "ids2", "psw"], input_dims = ["N,13", "L", "N", "N,3", "N,3"], output_names = ["y", "aux", "mid"], symbols = ["N", "L"]} : () -> ()
}) : () -> ()
