"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?xi64>, %arg1: tensor<?xi64>, %arg2: tensor<?xi64>, %arg3: tensor<10x4xf32>, %arg4: tensor<10x4xf32>, %arg5: tensor<10x4xf32>, %arg6: tensor<1x12xf32>):
    %0 = "cagr.gather"(%arg3, %arg0) {name = "emb0", cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %1 = "cagr.unsqueeze"(%0) {name = "u0", axes = [1], cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %2 = "cagr.gather"(%arg4, %arg1) {name = "emb1", cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %3 = "cagr.unsqueeze"(%2) {name = "u1", axes = [1], cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %4 = "cagr.gather"(%arg5, %arg2) {name = "emb2", cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %5 = "cagr.unsqueeze"(%4) {name = "u2", axes = [1], cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %6 = "cagr.concat"(%1, %3, %5) {name = "stack", axis = 1 : i64, cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x3x4xf32>
    %7 = "cagr.fm"(%6) {name = "fm", cagr.group = 0 : i64, cagr.kernel = "own.fm"} : (tensor<?x3x4xf32>) -> tensor<?x1xf32>
    "cagr.return"(%7) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["ids0", "ids1", "ids2", "t0", "t1", "t2", "w"], input_dims = ["N", "N", "N", "10,4", "10,4", "10,4", "1,12"], output_names = ["out"], symbols = ["N"]} : () -> ()
}) : () -> ()
