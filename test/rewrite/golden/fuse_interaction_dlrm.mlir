"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: tensor<?x2xi64>, %arg2: tensor<?x2xi64>, %arg3: tensor<?x2xi64>, %arg4: tensor<10x4xf32>, %arg5: tensor<10x4xf32>, %arg6: tensor<10x4xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<1x10xf32>):
    %0 = "cagr.gemm"(%arg0, %arg7) {name = "bot", transB = 1 : i64} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.relu"(%0) {name = "bot_relu"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.embedding_bag"(%arg4, %arg1) {name = "bag0", cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %3 = "cagr.embedding_bag"(%arg5, %arg2) {name = "bag1", cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %4 = "cagr.embedding_bag"(%arg6, %arg3) {name = "bag2", cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %5 = "cagr.concat"(%1, %2, %3, %4) {name = "stack", axis = 1 : i64, cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
    %6 = "cagr.reshape"(%5) {name = "view", shape = [0, -1, 4], cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<?x16xf32>) -> tensor<?x4x4xf32>
    %7 = "cagr.interaction"(%6) {name = "interact", cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<?x4x4xf32>) -> tensor<?x6xf32>
    %8 = "cagr.concat"(%1, %7) {name = "join", axis = 1 : i64, cagr.group = 0 : i64, cagr.kernel = "own.interaction"} : (tensor<?x4xf32>, tensor<?x6xf32>) -> tensor<?x10xf32>
    %9 = "cagr.gemm"(%8, %arg8) {name = "top", transB = 1 : i64} : (tensor<?x10xf32>, tensor<1x10xf32>) -> tensor<?x1xf32>
    "cagr.return"(%9) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["dense", "ids0", "ids1", "ids2", "t0", "t1", "t2", "wb", "wt"], input_dims = ["N,4", "N,2", "N,2", "N,2", "10,4", "10,4", "10,4", "4,4", "1,10"], output_names = ["out"], symbols = ["N"]} : () -> ()
}) : () -> ()
