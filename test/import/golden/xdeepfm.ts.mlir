"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x22xi64>):
    %0 = "cagr.constant"() {elided, name = "/emb/Constant_output_0"} : () -> tensor<i64>
    %1 = "cagr.gather"(%arg0, %0) {name = "/emb/Gather", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %2 = "cagr.constant"() {elided, name = "emb.embs.0.weight"} : () -> tensor<240x16xf32>
    %3 = "cagr.gather"(%2, %1) {name = "/emb/embs.0/Gather", axis = 0 : i64} : (tensor<240x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %4 = "cagr.unsqueeze"(%3) {name = "/emb/Unsqueeze", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %5 = "cagr.constant"() {elided, name = "linear.embs.0.weight"} : () -> tensor<240x1xf32>
    %6 = "cagr.gather"(%5, %1) {name = "/linear/embs.0/Gather", axis = 0 : i64} : (tensor<240x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %7 = "cagr.constant"() {elided, name = "/emb/Constant_1_output_0"} : () -> tensor<i64>
    %8 = "cagr.gather"(%arg0, %7) {name = "/emb/Gather_1", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %9 = "cagr.constant"() {elided, name = "emb.embs.1.weight"} : () -> tensor<7x16xf32>
    %10 = "cagr.gather"(%9, %8) {name = "/emb/embs.1/Gather", axis = 0 : i64} : (tensor<7x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %11 = "cagr.unsqueeze"(%10) {name = "/emb/Unsqueeze_1", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %12 = "cagr.constant"() {elided, name = "linear.embs.1.weight"} : () -> tensor<7x1xf32>
    %13 = "cagr.gather"(%12, %8) {name = "/linear/embs.1/Gather", axis = 0 : i64} : (tensor<7x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %14 = "cagr.constant"() {elided, name = "/emb/Constant_2_output_0"} : () -> tensor<i64>
    %15 = "cagr.gather"(%arg0, %14) {name = "/emb/Gather_2", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %16 = "cagr.constant"() {elided, name = "emb.embs.2.weight"} : () -> tensor<7x16xf32>
    %17 = "cagr.gather"(%16, %15) {name = "/emb/embs.2/Gather", axis = 0 : i64} : (tensor<7x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %18 = "cagr.unsqueeze"(%17) {name = "/emb/Unsqueeze_2", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %19 = "cagr.constant"() {elided, name = "linear.embs.2.weight"} : () -> tensor<7x1xf32>
    %20 = "cagr.gather"(%19, %15) {name = "/linear/embs.2/Gather", axis = 0 : i64} : (tensor<7x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %21 = "cagr.constant"() {elided, name = "/emb/Constant_3_output_0"} : () -> tensor<i64>
    %22 = "cagr.gather"(%arg0, %21) {name = "/emb/Gather_3", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %23 = "cagr.constant"() {elided, name = "emb.embs.3.weight"} : () -> tensor<1000x16xf32>
    %24 = "cagr.gather"(%23, %22) {name = "/emb/embs.3/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %25 = "cagr.unsqueeze"(%24) {name = "/emb/Unsqueeze_3", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %26 = "cagr.constant"() {elided, name = "linear.embs.3.weight"} : () -> tensor<1000x1xf32>
    %27 = "cagr.gather"(%26, %22) {name = "/linear/embs.3/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %28 = "cagr.constant"() {elided, name = "/emb/Constant_4_output_0"} : () -> tensor<i64>
    %29 = "cagr.gather"(%arg0, %28) {name = "/emb/Gather_4", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %30 = "cagr.constant"() {elided, name = "emb.embs.4.weight"} : () -> tensor<1000x16xf32>
    %31 = "cagr.gather"(%30, %29) {name = "/emb/embs.4/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %32 = "cagr.unsqueeze"(%31) {name = "/emb/Unsqueeze_4", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %33 = "cagr.constant"() {elided, name = "linear.embs.4.weight"} : () -> tensor<1000x1xf32>
    %34 = "cagr.gather"(%33, %29) {name = "/linear/embs.4/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %35 = "cagr.constant"() {elided, name = "/emb/Constant_5_output_0"} : () -> tensor<i64>
    %36 = "cagr.gather"(%arg0, %35) {name = "/emb/Gather_5", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %37 = "cagr.constant"() {elided, name = "emb.embs.5.weight"} : () -> tensor<26x16xf32>
    %38 = "cagr.gather"(%37, %36) {name = "/emb/embs.5/Gather", axis = 0 : i64} : (tensor<26x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %39 = "cagr.unsqueeze"(%38) {name = "/emb/Unsqueeze_5", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %40 = "cagr.constant"() {elided, name = "linear.embs.5.weight"} : () -> tensor<26x1xf32>
    %41 = "cagr.gather"(%40, %36) {name = "/linear/embs.5/Gather", axis = 0 : i64} : (tensor<26x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %42 = "cagr.constant"() {elided, name = "/emb/Constant_6_output_0"} : () -> tensor<i64>
    %43 = "cagr.gather"(%arg0, %42) {name = "/emb/Gather_6", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %44 = "cagr.constant"() {elided, name = "emb.embs.6.weight"} : () -> tensor<1000x16xf32>
    %45 = "cagr.gather"(%44, %43) {name = "/emb/embs.6/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %46 = "cagr.unsqueeze"(%45) {name = "/emb/Unsqueeze_6", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %47 = "cagr.constant"() {elided, name = "linear.embs.6.weight"} : () -> tensor<1000x1xf32>
    %48 = "cagr.gather"(%47, %43) {name = "/linear/embs.6/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %49 = "cagr.constant"() {elided, name = "/emb/Constant_7_output_0"} : () -> tensor<i64>
    %50 = "cagr.gather"(%arg0, %49) {name = "/emb/Gather_7", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %51 = "cagr.constant"() {elided, name = "emb.embs.7.weight"} : () -> tensor<559x16xf32>
    %52 = "cagr.gather"(%51, %50) {name = "/emb/embs.7/Gather", axis = 0 : i64} : (tensor<559x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %53 = "cagr.unsqueeze"(%52) {name = "/emb/Unsqueeze_7", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %54 = "cagr.constant"() {elided, name = "linear.embs.7.weight"} : () -> tensor<559x1xf32>
    %55 = "cagr.gather"(%54, %50) {name = "/linear/embs.7/Gather", axis = 0 : i64} : (tensor<559x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %56 = "cagr.constant"() {elided, name = "/emb/Constant_8_output_0"} : () -> tensor<i64>
    %57 = "cagr.gather"(%arg0, %56) {name = "/emb/Gather_8", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %58 = "cagr.constant"() {elided, name = "emb.embs.8.weight"} : () -> tensor<36x16xf32>
    %59 = "cagr.gather"(%58, %57) {name = "/emb/embs.8/Gather", axis = 0 : i64} : (tensor<36x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %60 = "cagr.unsqueeze"(%59) {name = "/emb/Unsqueeze_8", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %61 = "cagr.constant"() {elided, name = "linear.embs.8.weight"} : () -> tensor<36x1xf32>
    %62 = "cagr.gather"(%61, %57) {name = "/linear/embs.8/Gather", axis = 0 : i64} : (tensor<36x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %63 = "cagr.constant"() {elided, name = "/emb/Constant_9_output_0"} : () -> tensor<i64>
    %64 = "cagr.gather"(%arg0, %63) {name = "/emb/Gather_9", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %65 = "cagr.constant"() {elided, name = "emb.embs.9.weight"} : () -> tensor<1000x16xf32>
    %66 = "cagr.gather"(%65, %64) {name = "/emb/embs.9/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %67 = "cagr.unsqueeze"(%66) {name = "/emb/Unsqueeze_9", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %68 = "cagr.constant"() {elided, name = "linear.embs.9.weight"} : () -> tensor<1000x1xf32>
    %69 = "cagr.gather"(%68, %64) {name = "/linear/embs.9/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %70 = "cagr.constant"() {elided, name = "/emb/Constant_10_output_0"} : () -> tensor<i64>
    %71 = "cagr.gather"(%arg0, %70) {name = "/emb/Gather_10", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %72 = "cagr.constant"() {elided, name = "emb.embs.10.weight"} : () -> tensor<1000x16xf32>
    %73 = "cagr.gather"(%72, %71) {name = "/emb/embs.10/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %74 = "cagr.unsqueeze"(%73) {name = "/emb/Unsqueeze_10", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %75 = "cagr.constant"() {elided, name = "linear.embs.10.weight"} : () -> tensor<1000x1xf32>
    %76 = "cagr.gather"(%75, %71) {name = "/linear/embs.10/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %77 = "cagr.constant"() {elided, name = "/emb/Constant_11_output_0"} : () -> tensor<i64>
    %78 = "cagr.gather"(%arg0, %77) {name = "/emb/Gather_11", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %79 = "cagr.constant"() {elided, name = "emb.embs.11.weight"} : () -> tensor<1000x16xf32>
    %80 = "cagr.gather"(%79, %78) {name = "/emb/embs.11/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %81 = "cagr.unsqueeze"(%80) {name = "/emb/Unsqueeze_11", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %82 = "cagr.constant"() {elided, name = "linear.embs.11.weight"} : () -> tensor<1000x1xf32>
    %83 = "cagr.gather"(%82, %78) {name = "/linear/embs.11/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %84 = "cagr.constant"() {elided, name = "/emb/Constant_12_output_0"} : () -> tensor<i64>
    %85 = "cagr.gather"(%arg0, %84) {name = "/emb/Gather_12", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %86 = "cagr.constant"() {elided, name = "emb.embs.12.weight"} : () -> tensor<5x16xf32>
    %87 = "cagr.gather"(%86, %85) {name = "/emb/embs.12/Gather", axis = 0 : i64} : (tensor<5x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %88 = "cagr.unsqueeze"(%87) {name = "/emb/Unsqueeze_12", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %89 = "cagr.constant"() {elided, name = "linear.embs.12.weight"} : () -> tensor<5x1xf32>
    %90 = "cagr.gather"(%89, %85) {name = "/linear/embs.12/Gather", axis = 0 : i64} : (tensor<5x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %91 = "cagr.constant"() {elided, name = "/emb/Constant_13_output_0"} : () -> tensor<i64>
    %92 = "cagr.gather"(%arg0, %91) {name = "/emb/Gather_13", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %93 = "cagr.constant"() {elided, name = "emb.embs.13.weight"} : () -> tensor<4x16xf32>
    %94 = "cagr.gather"(%93, %92) {name = "/emb/embs.13/Gather", axis = 0 : i64} : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %95 = "cagr.unsqueeze"(%94) {name = "/emb/Unsqueeze_13", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %96 = "cagr.constant"() {elided, name = "linear.embs.13.weight"} : () -> tensor<4x1xf32>
    %97 = "cagr.gather"(%96, %92) {name = "/linear/embs.13/Gather", axis = 0 : i64} : (tensor<4x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %98 = "cagr.constant"() {elided, name = "/emb/Constant_14_output_0"} : () -> tensor<i64>
    %99 = "cagr.gather"(%arg0, %98) {name = "/emb/Gather_14", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %100 = "cagr.constant"() {elided, name = "emb.embs.14.weight"} : () -> tensor<1000x16xf32>
    %101 = "cagr.gather"(%100, %99) {name = "/emb/embs.14/Gather", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %102 = "cagr.unsqueeze"(%101) {name = "/emb/Unsqueeze_14", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %103 = "cagr.constant"() {elided, name = "linear.embs.14.weight"} : () -> tensor<1000x1xf32>
    %104 = "cagr.gather"(%103, %99) {name = "/linear/embs.14/Gather", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %105 = "cagr.constant"() {elided, name = "/emb/Constant_15_output_0"} : () -> tensor<i64>
    %106 = "cagr.gather"(%arg0, %105) {name = "/emb/Gather_15", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %107 = "cagr.constant"() {elided, name = "emb.embs.15.weight"} : () -> tensor<8x16xf32>
    %108 = "cagr.gather"(%107, %106) {name = "/emb/embs.15/Gather", axis = 0 : i64} : (tensor<8x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %109 = "cagr.unsqueeze"(%108) {name = "/emb/Unsqueeze_15", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %110 = "cagr.constant"() {elided, name = "linear.embs.15.weight"} : () -> tensor<8x1xf32>
    %111 = "cagr.gather"(%110, %106) {name = "/linear/embs.15/Gather", axis = 0 : i64} : (tensor<8x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %112 = "cagr.constant"() {elided, name = "/emb/Constant_16_output_0"} : () -> tensor<i64>
    %113 = "cagr.gather"(%arg0, %112) {name = "/emb/Gather_16", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %114 = "cagr.constant"() {elided, name = "emb.embs.16.weight"} : () -> tensor<9x16xf32>
    %115 = "cagr.gather"(%114, %113) {name = "/emb/embs.16/Gather", axis = 0 : i64} : (tensor<9x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %116 = "cagr.unsqueeze"(%115) {name = "/emb/Unsqueeze_16", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %117 = "cagr.constant"() {elided, name = "linear.embs.16.weight"} : () -> tensor<9x1xf32>
    %118 = "cagr.gather"(%117, %113) {name = "/linear/embs.16/Gather", axis = 0 : i64} : (tensor<9x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %119 = "cagr.constant"() {elided, name = "/emb/Constant_17_output_0"} : () -> tensor<i64>
    %120 = "cagr.gather"(%arg0, %119) {name = "/emb/Gather_17", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %121 = "cagr.constant"() {elided, name = "emb.embs.17.weight"} : () -> tensor<435x16xf32>
    %122 = "cagr.gather"(%121, %120) {name = "/emb/embs.17/Gather", axis = 0 : i64} : (tensor<435x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %123 = "cagr.unsqueeze"(%122) {name = "/emb/Unsqueeze_17", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %124 = "cagr.constant"() {elided, name = "linear.embs.17.weight"} : () -> tensor<435x1xf32>
    %125 = "cagr.gather"(%124, %120) {name = "/linear/embs.17/Gather", axis = 0 : i64} : (tensor<435x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %126 = "cagr.constant"() {elided, name = "/emb/Constant_18_output_0"} : () -> tensor<i64>
    %127 = "cagr.gather"(%arg0, %126) {name = "/emb/Gather_18", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %128 = "cagr.constant"() {elided, name = "emb.embs.18.weight"} : () -> tensor<4x16xf32>
    %129 = "cagr.gather"(%128, %127) {name = "/emb/embs.18/Gather", axis = 0 : i64} : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %130 = "cagr.unsqueeze"(%129) {name = "/emb/Unsqueeze_18", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %131 = "cagr.constant"() {elided, name = "linear.embs.18.weight"} : () -> tensor<4x1xf32>
    %132 = "cagr.gather"(%131, %127) {name = "/linear/embs.18/Gather", axis = 0 : i64} : (tensor<4x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %133 = "cagr.constant"() {elided, name = "/emb/Constant_19_output_0"} : () -> tensor<i64>
    %134 = "cagr.gather"(%arg0, %133) {name = "/emb/Gather_19", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %135 = "cagr.constant"() {elided, name = "emb.embs.19.weight"} : () -> tensor<68x16xf32>
    %136 = "cagr.gather"(%135, %134) {name = "/emb/embs.19/Gather", axis = 0 : i64} : (tensor<68x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %137 = "cagr.unsqueeze"(%136) {name = "/emb/Unsqueeze_19", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %138 = "cagr.constant"() {elided, name = "linear.embs.19.weight"} : () -> tensor<68x1xf32>
    %139 = "cagr.gather"(%138, %134) {name = "/linear/embs.19/Gather", axis = 0 : i64} : (tensor<68x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %140 = "cagr.constant"() {elided, name = "/emb/Constant_20_output_0"} : () -> tensor<i64>
    %141 = "cagr.gather"(%arg0, %140) {name = "/emb/Gather_20", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %142 = "cagr.constant"() {elided, name = "emb.embs.20.weight"} : () -> tensor<172x16xf32>
    %143 = "cagr.gather"(%142, %141) {name = "/emb/embs.20/Gather", axis = 0 : i64} : (tensor<172x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %144 = "cagr.unsqueeze"(%143) {name = "/emb/Unsqueeze_20", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %145 = "cagr.constant"() {elided, name = "linear.embs.20.weight"} : () -> tensor<172x1xf32>
    %146 = "cagr.gather"(%145, %141) {name = "/linear/embs.20/Gather", axis = 0 : i64} : (tensor<172x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %147 = "cagr.constant"() {elided, name = "/emb/Constant_21_output_0"} : () -> tensor<i64>
    %148 = "cagr.gather"(%arg0, %147) {name = "/emb/Gather_21", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %149 = "cagr.constant"() {elided, name = "emb.embs.21.weight"} : () -> tensor<60x16xf32>
    %150 = "cagr.gather"(%149, %148) {name = "/emb/embs.21/Gather", axis = 0 : i64} : (tensor<60x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %151 = "cagr.unsqueeze"(%150) {name = "/emb/Unsqueeze_21", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %152 = "cagr.concat"(%4, %11, %18, %25, %32, %39, %46, %53, %60, %67, %74, %81, %88, %95, %102, %109, %116, %123, %130, %137, %144, %151) {name = "/emb/Concat", axis = 1 : i64} : (tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>) -> tensor<?x22x16xf32>
    %153 = "cagr.flatten"(%152) {name = "/Flatten", axis = 1 : i64} : (tensor<?x22x16xf32>) -> tensor<?x352xf32>
    %154 = "cagr.constant"() {elided, name = "dnn.0.weight"} : () -> tensor<400x352xf32>
    %155 = "cagr.constant"() {elided, name = "dnn.0.bias"} : () -> tensor<400xf32>
    %156 = "cagr.gemm"(%153, %154, %155) {name = "/dnn/dnn.0/Gemm", transB = 1 : i64} : (tensor<?x352xf32>, tensor<400x352xf32>, tensor<400xf32>) -> tensor<?x400xf32>
    %157 = "cagr.relu"(%156) {name = "/dnn/dnn.1/Relu"} : (tensor<?x400xf32>) -> tensor<?x400xf32>
    %158 = "cagr.constant"() {elided, name = "dnn.2.weight"} : () -> tensor<400x400xf32>
    %159 = "cagr.constant"() {elided, name = "dnn.2.bias"} : () -> tensor<400xf32>
    %160 = "cagr.gemm"(%157, %158, %159) {name = "/dnn/dnn.2/Gemm", transB = 1 : i64} : (tensor<?x400xf32>, tensor<400x400xf32>, tensor<400xf32>) -> tensor<?x400xf32>
    %161 = "cagr.relu"(%160) {name = "/dnn/dnn.3/Relu"} : (tensor<?x400xf32>) -> tensor<?x400xf32>
    %162 = "cagr.constant"() {elided, name = "onnx::MatMul_262"} : () -> tensor<400x1xf32>
    %163 = "cagr.matmul"(%161, %162) {name = "/dnn_out/MatMul"} : (tensor<?x400xf32>, tensor<400x1xf32>) -> tensor<?x1xf32>
    %164 = "cagr.constant"() {elided, name = "cin.conv1ds.0.weight.cin"} : () -> tensor<200x484xf32>
    %165 = "cagr.constant"() {elided, name = "cin.conv1ds.0.bias"} : () -> tensor<200xf32>
    %166 = "cagr.cin"(%152, %152, %164, %165) {name = "/cin/conv1ds.0/Conv.cin", result_names = ["/cin/conv1ds.0/Conv"]} : (tensor<?x22x16xf32>, tensor<?x22x16xf32>, tensor<200x484xf32>, tensor<200xf32>) -> tensor<?x200x16xf32>
    %167 = "cagr.relu"(%166) {name = "/cin/Relu"} : (tensor<?x200x16xf32>) -> tensor<?x200x16xf32>
    %168 = "cagr.constant"() {elided, name = "cin.conv1ds.1.weight.cin"} : () -> tensor<200x4400xf32>
    %169 = "cagr.constant"() {elided, name = "cin.conv1ds.1.bias"} : () -> tensor<200xf32>
    %170 = "cagr.cin"(%167, %152, %168, %169) {name = "/cin/conv1ds.1/Conv.cin", result_names = ["/cin/conv1ds.1/Conv"]} : (tensor<?x200x16xf32>, tensor<?x22x16xf32>, tensor<200x4400xf32>, tensor<200xf32>) -> tensor<?x200x16xf32>
    %171 = "cagr.relu"(%170) {name = "/cin/Relu_1"} : (tensor<?x200x16xf32>) -> tensor<?x200x16xf32>
    %172 = "cagr.constant"() {elided, name = "cin.conv1ds.2.weight.cin"} : () -> tensor<200x4400xf32>
    %173 = "cagr.constant"() {elided, name = "cin.conv1ds.2.bias"} : () -> tensor<200xf32>
    %174 = "cagr.cin"(%171, %152, %172, %173) {name = "/cin/conv1ds.2/Conv.cin", result_names = ["/cin/conv1ds.2/Conv"]} : (tensor<?x200x16xf32>, tensor<?x22x16xf32>, tensor<200x4400xf32>, tensor<200xf32>) -> tensor<?x200x16xf32>
    %175 = "cagr.relu"(%174) {name = "/cin/Relu_2"} : (tensor<?x200x16xf32>) -> tensor<?x200x16xf32>
    %176 = "cagr.reduce_sum"(%175) {name = "/cin/ReduceSum.part2", axes = [-1], keepdims = 0 : i64} : (tensor<?x200x16xf32>) -> tensor<?x200xf32>
    %177 = "cagr.reduce_sum"(%171) {name = "/cin/ReduceSum.part1", axes = [-1], keepdims = 0 : i64} : (tensor<?x200x16xf32>) -> tensor<?x200xf32>
    %178 = "cagr.reduce_sum"(%167) {name = "/cin/ReduceSum.part0", axes = [-1], keepdims = 0 : i64} : (tensor<?x200x16xf32>) -> tensor<?x200xf32>
    %179 = "cagr.concat"(%178, %177, %176) {name = "/cin/ReduceSum.concat", axis = 1 : i64, result_names = ["/cin/ReduceSum"]} : (tensor<?x200xf32>, tensor<?x200xf32>, tensor<?x200xf32>) -> tensor<?x600xf32>
    %180 = "cagr.constant"() {elided, name = "onnx::MatMul_261"} : () -> tensor<600x1xf32>
    %181 = "cagr.matmul"(%179, %180) {name = "/cin_linear/MatMul"} : (tensor<?x600xf32>, tensor<600x1xf32>) -> tensor<?x1xf32>
    %182 = "cagr.constant"() {elided, name = "linear.embs.21.weight"} : () -> tensor<60x1xf32>
    %183 = "cagr.gather"(%182, %148) {name = "/linear/embs.21/Gather", axis = 0 : i64} : (tensor<60x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %184 = "cagr.concat"(%6, %13, %20, %27, %34, %41, %48, %55, %62, %69, %76, %83, %90, %97, %104, %111, %118, %125, %132, %139, %146, %183) {name = "/linear/Concat", axis = 1 : i64} : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x22xf32>
    %185 = "cagr.reduce_sum"(%184) {name = "/linear/ReduceSum", axes = [1], keepdims = 1 : i64} : (tensor<?x22xf32>) -> tensor<?x1xf32>
    %186 = "cagr.constant"() {elided, name = "linear.bias"} : () -> tensor<1xf32>
    %187 = "cagr.add"(%185, %186) {name = "/linear/Add"} : (tensor<?x1xf32>, tensor<1xf32>) -> tensor<?x1xf32>
    %188 = "cagr.add"(%187, %181) {name = "/Add"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    %189 = "cagr.add"(%188, %163) {name = "/Add_1"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    %190 = "cagr.sigmoid"(%189) {name = "/Sigmoid"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%190) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["sparse"], input_dims = ["N,22"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
