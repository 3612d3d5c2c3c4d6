"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x13xf32>, %arg1: tensor<26x?xi64>, %arg2: tensor<26x?xi64>):
    %0 = "cagr.constant"() {elided, name = "bot_l.0.weight"} : () -> tensor<512x13xf32>
    %1 = "cagr.constant"() {elided, name = "bot_l.0.bias"} : () -> tensor<512xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "/bot_l/bot_l.0/Gemm", transB = 1 : i64} : (tensor<?x13xf32>, tensor<512x13xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %3 = "cagr.relu"(%2) {name = "/bot_l/bot_l.1/Relu"} : (tensor<?x512xf32>) -> tensor<?x512xf32>
    %4 = "cagr.constant"() {elided, name = "bot_l.2.weight"} : () -> tensor<256x512xf32>
    %5 = "cagr.constant"() {elided, name = "bot_l.2.bias"} : () -> tensor<256xf32>
    %6 = "cagr.gemm"(%3, %4, %5) {name = "/bot_l/bot_l.2/Gemm", transB = 1 : i64} : (tensor<?x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<?x256xf32>
    %7 = "cagr.relu"(%6) {name = "/bot_l/bot_l.3/Relu"} : (tensor<?x256xf32>) -> tensor<?x256xf32>
    %8 = "cagr.constant"() {elided, name = "bot_l.4.weight"} : () -> tensor<64x256xf32>
    %9 = "cagr.constant"() {elided, name = "bot_l.4.bias"} : () -> tensor<64xf32>
    %10 = "cagr.gemm"(%7, %8, %9) {name = "/bot_l/bot_l.4/Gemm", transB = 1 : i64} : (tensor<?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %11 = "cagr.relu"(%10) {name = "/bot_l/bot_l.5/Relu"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
    %12 = "cagr.constant"() {elided, name = "bot_l.6.weight"} : () -> tensor<16x64xf32>
    %13 = "cagr.constant"() {elided, name = "bot_l.6.bias"} : () -> tensor<16xf32>
    %14 = "cagr.gemm"(%11, %12, %13) {name = "/bot_l/bot_l.6/Gemm", transB = 1 : i64} : (tensor<?x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %15 = "cagr.relu"(%14) {name = "/bot_l/bot_l.7/Relu"} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %16 = "cagr.constant"() {elided, name = "/Constant_output_0"} : () -> tensor<i64>
    %17 = "cagr.gather"(%arg1, %16) {name = "/Gather", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %18 = "cagr.gather"(%arg2, %16) {name = "/Gather_1", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %19 = "cagr.constant"() {elided, name = "emb_l.0.weight"} : () -> tensor<1000x16xf32>
    %20 = "cagr.embedding_bag"(%19, %17, %18) {name = "/emb_l.0/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %21 = "cagr.constant"() {elided, name = "/Constant_1_output_0"} : () -> tensor<i64>
    %22 = "cagr.gather"(%arg1, %21) {name = "/Gather_2", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %23 = "cagr.gather"(%arg2, %21) {name = "/Gather_3", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %24 = "cagr.constant"() {elided, name = "emb_l.1.weight"} : () -> tensor<583x16xf32>
    %25 = "cagr.embedding_bag"(%24, %22, %23) {name = "/emb_l.1/Loop", mode = "sum"} : (tensor<583x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %26 = "cagr.constant"() {elided, name = "/Constant_2_output_0"} : () -> tensor<i64>
    %27 = "cagr.gather"(%arg1, %26) {name = "/Gather_4", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %28 = "cagr.gather"(%arg2, %26) {name = "/Gather_5", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %29 = "cagr.constant"() {elided, name = "emb_l.2.weight"} : () -> tensor<1000x16xf32>
    %30 = "cagr.embedding_bag"(%29, %27, %28) {name = "/emb_l.2/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %31 = "cagr.constant"() {elided, name = "/Constant_3_output_0"} : () -> tensor<i64>
    %32 = "cagr.gather"(%arg1, %31) {name = "/Gather_6", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %33 = "cagr.gather"(%arg2, %31) {name = "/Gather_7", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %34 = "cagr.constant"() {elided, name = "emb_l.3.weight"} : () -> tensor<1000x16xf32>
    %35 = "cagr.embedding_bag"(%34, %32, %33) {name = "/emb_l.3/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %36 = "cagr.constant"() {elided, name = "/Constant_4_output_0"} : () -> tensor<i64>
    %37 = "cagr.gather"(%arg1, %36) {name = "/Gather_8", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %38 = "cagr.gather"(%arg2, %36) {name = "/Gather_9", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %39 = "cagr.constant"() {elided, name = "emb_l.4.weight"} : () -> tensor<305x16xf32>
    %40 = "cagr.embedding_bag"(%39, %37, %38) {name = "/emb_l.4/Loop", mode = "sum"} : (tensor<305x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %41 = "cagr.constant"() {elided, name = "/Constant_5_output_0"} : () -> tensor<i64>
    %42 = "cagr.gather"(%arg1, %41) {name = "/Gather_10", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %43 = "cagr.gather"(%arg2, %41) {name = "/Gather_11", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %44 = "cagr.constant"() {elided, name = "emb_l.5.weight"} : () -> tensor<24x16xf32>
    %45 = "cagr.embedding_bag"(%44, %42, %43) {name = "/emb_l.5/Loop", mode = "sum"} : (tensor<24x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %46 = "cagr.constant"() {elided, name = "/Constant_6_output_0"} : () -> tensor<i64>
    %47 = "cagr.gather"(%arg1, %46) {name = "/Gather_12", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %48 = "cagr.gather"(%arg2, %46) {name = "/Gather_13", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %49 = "cagr.constant"() {elided, name = "emb_l.6.weight"} : () -> tensor<1000x16xf32>
    %50 = "cagr.embedding_bag"(%49, %47, %48) {name = "/emb_l.6/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %51 = "cagr.constant"() {elided, name = "/Constant_7_output_0"} : () -> tensor<i64>
    %52 = "cagr.gather"(%arg1, %51) {name = "/Gather_14", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %53 = "cagr.gather"(%arg2, %51) {name = "/Gather_15", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %54 = "cagr.constant"() {elided, name = "emb_l.7.weight"} : () -> tensor<633x16xf32>
    %55 = "cagr.embedding_bag"(%54, %52, %53) {name = "/emb_l.7/Loop", mode = "sum"} : (tensor<633x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %56 = "cagr.constant"() {elided, name = "/Constant_8_output_0"} : () -> tensor<i64>
    %57 = "cagr.gather"(%arg1, %56) {name = "/Gather_16", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %58 = "cagr.gather"(%arg2, %56) {name = "/Gather_17", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %59 = "cagr.constant"() {elided, name = "emb_l.8.weight"} : () -> tensor<3x16xf32>
    %60 = "cagr.embedding_bag"(%59, %57, %58) {name = "/emb_l.8/Loop", mode = "sum"} : (tensor<3x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %61 = "cagr.constant"() {elided, name = "/Constant_9_output_0"} : () -> tensor<i64>
    %62 = "cagr.gather"(%arg1, %61) {name = "/Gather_18", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %63 = "cagr.gather"(%arg2, %61) {name = "/Gather_19", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %64 = "cagr.constant"() {elided, name = "emb_l.9.weight"} : () -> tensor<1000x16xf32>
    %65 = "cagr.embedding_bag"(%64, %62, %63) {name = "/emb_l.9/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %66 = "cagr.constant"() {elided, name = "/Constant_10_output_0"} : () -> tensor<i64>
    %67 = "cagr.gather"(%arg1, %66) {name = "/Gather_20", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %68 = "cagr.gather"(%arg2, %66) {name = "/Gather_21", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %69 = "cagr.constant"() {elided, name = "emb_l.10.weight"} : () -> tensor<1000x16xf32>
    %70 = "cagr.embedding_bag"(%69, %67, %68) {name = "/emb_l.10/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %71 = "cagr.constant"() {elided, name = "/Constant_11_output_0"} : () -> tensor<i64>
    %72 = "cagr.gather"(%arg1, %71) {name = "/Gather_22", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %73 = "cagr.gather"(%arg2, %71) {name = "/Gather_23", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %74 = "cagr.constant"() {elided, name = "emb_l.11.weight"} : () -> tensor<1000x16xf32>
    %75 = "cagr.embedding_bag"(%74, %72, %73) {name = "/emb_l.11/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %76 = "cagr.constant"() {elided, name = "/Constant_12_output_0"} : () -> tensor<i64>
    %77 = "cagr.gather"(%arg1, %76) {name = "/Gather_24", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %78 = "cagr.gather"(%arg2, %76) {name = "/Gather_25", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %79 = "cagr.constant"() {elided, name = "emb_l.12.weight"} : () -> tensor<1000x16xf32>
    %80 = "cagr.embedding_bag"(%79, %77, %78) {name = "/emb_l.12/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %81 = "cagr.constant"() {elided, name = "/Constant_13_output_0"} : () -> tensor<i64>
    %82 = "cagr.gather"(%arg1, %81) {name = "/Gather_26", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %83 = "cagr.gather"(%arg2, %81) {name = "/Gather_27", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %84 = "cagr.constant"() {elided, name = "emb_l.13.weight"} : () -> tensor<27x16xf32>
    %85 = "cagr.embedding_bag"(%84, %82, %83) {name = "/emb_l.13/Loop", mode = "sum"} : (tensor<27x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %86 = "cagr.constant"() {elided, name = "/Constant_14_output_0"} : () -> tensor<i64>
    %87 = "cagr.gather"(%arg1, %86) {name = "/Gather_28", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %88 = "cagr.gather"(%arg2, %86) {name = "/Gather_29", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %89 = "cagr.constant"() {elided, name = "emb_l.14.weight"} : () -> tensor<1000x16xf32>
    %90 = "cagr.embedding_bag"(%89, %87, %88) {name = "/emb_l.14/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %91 = "cagr.constant"() {elided, name = "/Constant_15_output_0"} : () -> tensor<i64>
    %92 = "cagr.gather"(%arg1, %91) {name = "/Gather_30", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %93 = "cagr.gather"(%arg2, %91) {name = "/Gather_31", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %94 = "cagr.constant"() {elided, name = "emb_l.15.weight"} : () -> tensor<1000x16xf32>
    %95 = "cagr.embedding_bag"(%94, %92, %93) {name = "/emb_l.15/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %96 = "cagr.constant"() {elided, name = "/Constant_16_output_0"} : () -> tensor<i64>
    %97 = "cagr.gather"(%arg1, %96) {name = "/Gather_32", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %98 = "cagr.gather"(%arg2, %96) {name = "/Gather_33", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %99 = "cagr.constant"() {elided, name = "emb_l.16.weight"} : () -> tensor<10x16xf32>
    %100 = "cagr.embedding_bag"(%99, %97, %98) {name = "/emb_l.16/Loop", mode = "sum"} : (tensor<10x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %101 = "cagr.constant"() {elided, name = "/Constant_17_output_0"} : () -> tensor<i64>
    %102 = "cagr.gather"(%arg1, %101) {name = "/Gather_34", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %103 = "cagr.gather"(%arg2, %101) {name = "/Gather_35", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %104 = "cagr.constant"() {elided, name = "emb_l.17.weight"} : () -> tensor<1000x16xf32>
    %105 = "cagr.embedding_bag"(%104, %102, %103) {name = "/emb_l.17/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %106 = "cagr.constant"() {elided, name = "/Constant_18_output_0"} : () -> tensor<i64>
    %107 = "cagr.gather"(%arg1, %106) {name = "/Gather_36", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %108 = "cagr.gather"(%arg2, %106) {name = "/Gather_37", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %109 = "cagr.constant"() {elided, name = "emb_l.18.weight"} : () -> tensor<1000x16xf32>
    %110 = "cagr.embedding_bag"(%109, %107, %108) {name = "/emb_l.18/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %111 = "cagr.constant"() {elided, name = "/Constant_19_output_0"} : () -> tensor<i64>
    %112 = "cagr.gather"(%arg1, %111) {name = "/Gather_38", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %113 = "cagr.gather"(%arg2, %111) {name = "/Gather_39", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %114 = "cagr.constant"() {elided, name = "emb_l.19.weight"} : () -> tensor<4x16xf32>
    %115 = "cagr.embedding_bag"(%114, %112, %113) {name = "/emb_l.19/Loop", mode = "sum"} : (tensor<4x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %116 = "cagr.constant"() {elided, name = "/Constant_20_output_0"} : () -> tensor<i64>
    %117 = "cagr.gather"(%arg1, %116) {name = "/Gather_40", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %118 = "cagr.gather"(%arg2, %116) {name = "/Gather_41", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %119 = "cagr.constant"() {elided, name = "emb_l.20.weight"} : () -> tensor<1000x16xf32>
    %120 = "cagr.embedding_bag"(%119, %117, %118) {name = "/emb_l.20/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %121 = "cagr.constant"() {elided, name = "/Constant_21_output_0"} : () -> tensor<i64>
    %122 = "cagr.gather"(%arg1, %121) {name = "/Gather_42", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %123 = "cagr.gather"(%arg2, %121) {name = "/Gather_43", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %124 = "cagr.constant"() {elided, name = "emb_l.21.weight"} : () -> tensor<18x16xf32>
    %125 = "cagr.embedding_bag"(%124, %122, %123) {name = "/emb_l.21/Loop", mode = "sum"} : (tensor<18x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %126 = "cagr.constant"() {elided, name = "/Constant_22_output_0"} : () -> tensor<i64>
    %127 = "cagr.gather"(%arg1, %126) {name = "/Gather_44", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %128 = "cagr.gather"(%arg2, %126) {name = "/Gather_45", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %129 = "cagr.constant"() {elided, name = "emb_l.22.weight"} : () -> tensor<15x16xf32>
    %130 = "cagr.embedding_bag"(%129, %127, %128) {name = "/emb_l.22/Loop", mode = "sum"} : (tensor<15x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %131 = "cagr.constant"() {elided, name = "/Constant_23_output_0"} : () -> tensor<i64>
    %132 = "cagr.gather"(%arg1, %131) {name = "/Gather_46", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %133 = "cagr.gather"(%arg2, %131) {name = "/Gather_47", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %134 = "cagr.constant"() {elided, name = "emb_l.23.weight"} : () -> tensor<1000x16xf32>
    %135 = "cagr.embedding_bag"(%134, %132, %133) {name = "/emb_l.23/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %136 = "cagr.constant"() {elided, name = "/Constant_24_output_0"} : () -> tensor<i64>
    %137 = "cagr.gather"(%arg1, %136) {name = "/Gather_48", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %138 = "cagr.gather"(%arg2, %136) {name = "/Gather_49", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %139 = "cagr.constant"() {elided, name = "emb_l.24.weight"} : () -> tensor<105x16xf32>
    %140 = "cagr.embedding_bag"(%139, %137, %138) {name = "/emb_l.24/Loop", mode = "sum"} : (tensor<105x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %141 = "cagr.constant"() {elided, name = "/Constant_25_output_0"} : () -> tensor<i64>
    %142 = "cagr.gather"(%arg1, %141) {name = "/Gather_50", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %143 = "cagr.gather"(%arg2, %141) {name = "/Gather_51", axis = 0 : i64} : (tensor<26x?xi64>, tensor<i64>) -> tensor<?xi64>
    %144 = "cagr.constant"() {elided, name = "emb_l.25.weight"} : () -> tensor<1000x16xf32>
    %145 = "cagr.embedding_bag"(%144, %142, %143) {name = "/emb_l.25/Loop", mode = "sum"} : (tensor<1000x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %146 = "cagr.concat"(%15, %20, %25, %30, %35, %40, %45, %50, %55, %60, %65, %70, %75, %80, %85, %90, %95, %100, %105, %110, %115, %120, %125, %130, %135, %140, %145) {name = "/Concat", axis = 1 : i64} : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x432xf32>
    %147 = "cagr.reshape"(%146) {name = "/Reshape", shape = [0, -1, 16]} : (tensor<?x432xf32>) -> tensor<?x27x16xf32>
    %148 = "cagr.interaction"(%147) {name = "/MatMul.interaction", result_names = ["/Transpose_2"]} : (tensor<?x27x16xf32>) -> tensor<?x351xf32>
    %149 = "cagr.reshape"(%148) {name = "/Reshape_2", shape = [0, 351]} : (tensor<?x351xf32>) -> tensor<?x351xf32>
    %150 = "cagr.concat"(%15, %149) {name = "/Concat_4", axis = 1 : i64} : (tensor<?x16xf32>, tensor<?x351xf32>) -> tensor<?x367xf32>
    %151 = "cagr.constant"() {elided, name = "top_l.0.weight"} : () -> tensor<512x367xf32>
    %152 = "cagr.constant"() {elided, name = "top_l.0.bias"} : () -> tensor<512xf32>
    %153 = "cagr.gemm"(%150, %151, %152) {name = "/top_l/top_l.0/Gemm", transB = 1 : i64} : (tensor<?x367xf32>, tensor<512x367xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %154 = "cagr.relu"(%153) {name = "/top_l/top_l.1/Relu"} : (tensor<?x512xf32>) -> tensor<?x512xf32>
    %155 = "cagr.constant"() {elided, name = "top_l.2.weight"} : () -> tensor<256x512xf32>
    %156 = "cagr.constant"() {elided, name = "top_l.2.bias"} : () -> tensor<256xf32>
    %157 = "cagr.gemm"(%154, %155, %156) {name = "/top_l/top_l.2/Gemm", transB = 1 : i64} : (tensor<?x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<?x256xf32>
    %158 = "cagr.relu"(%157) {name = "/top_l/top_l.3/Relu"} : (tensor<?x256xf32>) -> tensor<?x256xf32>
    %159 = "cagr.constant"() {elided, name = "top_l.4.weight"} : () -> tensor<1x256xf32>
    %160 = "cagr.constant"() {elided, name = "top_l.4.bias"} : () -> tensor<1xf32>
    %161 = "cagr.gemm"(%158, %159, %160) {name = "/top_l/top_l.4/Gemm", transB = 1 : i64} : (tensor<?x256xf32>, tensor<1x256xf32>, tensor<1xf32>) -> tensor<?x1xf32>
    %162 = "cagr.sigmoid"(%161) {name = "/Sigmoid"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%162) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["dense", "sparse_indices", "sparse_offsets"], input_dims = ["N,13", "26,L", "26,N"], output_names = ["prob"], symbols = ["N", "L"]} : () -> ()
}) : () -> ()
