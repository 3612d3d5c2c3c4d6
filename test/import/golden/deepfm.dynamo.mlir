"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x22xi64>):
    %0 = "cagr.constant"() {elided, name = "val_1"} : () -> tensor<i64>
    %1 = "cagr.gather"(%arg0, %0) {name = "node_select", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %2 = "cagr.constant"() {elided, name = "emb.embs.0.weight"} : () -> tensor<240x16xf32>
    %3 = "cagr.gather"(%2, %1) {name = "node_embedding", axis = 0 : i64} : (tensor<240x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %4 = "cagr.unsqueeze"(%3) {name = "node_Unsqueeze_24", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %5 = "cagr.constant"() {elided, name = "linear.embs.0.weight"} : () -> tensor<240x1xf32>
    %6 = "cagr.gather"(%5, %1) {name = "node_embedding_22", axis = 0 : i64} : (tensor<240x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %7 = "cagr.constant"() {elided, name = "val_2"} : () -> tensor<i64>
    %8 = "cagr.gather"(%arg0, %7) {name = "node_select_1", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %9 = "cagr.constant"() {elided, name = "emb.embs.1.weight"} : () -> tensor<7x16xf32>
    %10 = "cagr.gather"(%9, %8) {name = "node_embedding_1", axis = 0 : i64} : (tensor<7x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %11 = "cagr.unsqueeze"(%10) {name = "node_Unsqueeze_26", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %12 = "cagr.constant"() {elided, name = "linear.embs.1.weight"} : () -> tensor<7x1xf32>
    %13 = "cagr.gather"(%12, %8) {name = "node_embedding_23", axis = 0 : i64} : (tensor<7x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %14 = "cagr.constant"() {elided, name = "val_3"} : () -> tensor<i64>
    %15 = "cagr.gather"(%arg0, %14) {name = "node_select_2", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %16 = "cagr.constant"() {elided, name = "emb.embs.2.weight"} : () -> tensor<7x16xf32>
    %17 = "cagr.gather"(%16, %15) {name = "node_embedding_2", axis = 0 : i64} : (tensor<7x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %18 = "cagr.unsqueeze"(%17) {name = "node_Unsqueeze_28", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %19 = "cagr.constant"() {elided, name = "linear.embs.2.weight"} : () -> tensor<7x1xf32>
    %20 = "cagr.gather"(%19, %15) {name = "node_embedding_24", axis = 0 : i64} : (tensor<7x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %21 = "cagr.constant"() {elided, name = "val_4"} : () -> tensor<i64>
    %22 = "cagr.gather"(%arg0, %21) {name = "node_select_3", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %23 = "cagr.constant"() {elided, name = "emb.embs.3.weight"} : () -> tensor<1000x16xf32>
    %24 = "cagr.gather"(%23, %22) {name = "node_embedding_3", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %25 = "cagr.unsqueeze"(%24) {name = "node_Unsqueeze_30", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %26 = "cagr.constant"() {elided, name = "linear.embs.3.weight"} : () -> tensor<1000x1xf32>
    %27 = "cagr.gather"(%26, %22) {name = "node_embedding_25", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %28 = "cagr.constant"() {elided, name = "val_5"} : () -> tensor<i64>
    %29 = "cagr.gather"(%arg0, %28) {name = "node_select_4", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %30 = "cagr.constant"() {elided, name = "emb.embs.4.weight"} : () -> tensor<1000x16xf32>
    %31 = "cagr.gather"(%30, %29) {name = "node_embedding_4", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %32 = "cagr.unsqueeze"(%31) {name = "node_Unsqueeze_32", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %33 = "cagr.constant"() {elided, name = "linear.embs.4.weight"} : () -> tensor<1000x1xf32>
    %34 = "cagr.gather"(%33, %29) {name = "node_embedding_26", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %35 = "cagr.constant"() {elided, name = "val_6"} : () -> tensor<i64>
    %36 = "cagr.gather"(%arg0, %35) {name = "node_select_5", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %37 = "cagr.constant"() {elided, name = "emb.embs.5.weight"} : () -> tensor<26x16xf32>
    %38 = "cagr.gather"(%37, %36) {name = "node_embedding_5", axis = 0 : i64} : (tensor<26x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %39 = "cagr.unsqueeze"(%38) {name = "node_Unsqueeze_34", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %40 = "cagr.constant"() {elided, name = "linear.embs.5.weight"} : () -> tensor<26x1xf32>
    %41 = "cagr.gather"(%40, %36) {name = "node_embedding_27", axis = 0 : i64} : (tensor<26x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %42 = "cagr.constant"() {elided, name = "val_7"} : () -> tensor<i64>
    %43 = "cagr.gather"(%arg0, %42) {name = "node_select_6", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %44 = "cagr.constant"() {elided, name = "emb.embs.6.weight"} : () -> tensor<1000x16xf32>
    %45 = "cagr.gather"(%44, %43) {name = "node_embedding_6", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %46 = "cagr.unsqueeze"(%45) {name = "node_Unsqueeze_36", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %47 = "cagr.constant"() {elided, name = "linear.embs.6.weight"} : () -> tensor<1000x1xf32>
    %48 = "cagr.gather"(%47, %43) {name = "node_embedding_28", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %49 = "cagr.constant"() {elided, name = "val_8"} : () -> tensor<i64>
    %50 = "cagr.gather"(%arg0, %49) {name = "node_select_7", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %51 = "cagr.constant"() {elided, name = "emb.embs.7.weight"} : () -> tensor<559x16xf32>
    %52 = "cagr.gather"(%51, %50) {name = "node_embedding_7", axis = 0 : i64} : (tensor<559x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %53 = "cagr.unsqueeze"(%52) {name = "node_Unsqueeze_38", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %54 = "cagr.constant"() {elided, name = "linear.embs.7.weight"} : () -> tensor<559x1xf32>
    %55 = "cagr.gather"(%54, %50) {name = "node_embedding_29", axis = 0 : i64} : (tensor<559x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %56 = "cagr.constant"() {elided, name = "val_9"} : () -> tensor<i64>
    %57 = "cagr.gather"(%arg0, %56) {name = "node_select_8", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %58 = "cagr.constant"() {elided, name = "emb.embs.8.weight"} : () -> tensor<36x16xf32>
    %59 = "cagr.gather"(%58, %57) {name = "node_embedding_8", axis = 0 : i64} : (tensor<36x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %60 = "cagr.unsqueeze"(%59) {name = "node_Unsqueeze_40", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %61 = "cagr.constant"() {elided, name = "linear.embs.8.weight"} : () -> tensor<36x1xf32>
    %62 = "cagr.gather"(%61, %57) {name = "node_embedding_30", axis = 0 : i64} : (tensor<36x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %63 = "cagr.constant"() {elided, name = "val_10"} : () -> tensor<i64>
    %64 = "cagr.gather"(%arg0, %63) {name = "node_select_9", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %65 = "cagr.constant"() {elided, name = "emb.embs.9.weight"} : () -> tensor<1000x16xf32>
    %66 = "cagr.gather"(%65, %64) {name = "node_embedding_9", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %67 = "cagr.unsqueeze"(%66) {name = "node_Unsqueeze_42", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %68 = "cagr.constant"() {elided, name = "linear.embs.9.weight"} : () -> tensor<1000x1xf32>
    %69 = "cagr.gather"(%68, %64) {name = "node_embedding_31", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %70 = "cagr.constant"() {elided, name = "val_11"} : () -> tensor<i64>
    %71 = "cagr.gather"(%arg0, %70) {name = "node_select_10", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %72 = "cagr.constant"() {elided, name = "emb.embs.10.weight"} : () -> tensor<1000x16xf32>
    %73 = "cagr.gather"(%72, %71) {name = "node_embedding_10", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %74 = "cagr.unsqueeze"(%73) {name = "node_Unsqueeze_44", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %75 = "cagr.constant"() {elided, name = "linear.embs.10.weight"} : () -> tensor<1000x1xf32>
    %76 = "cagr.gather"(%75, %71) {name = "node_embedding_32", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %77 = "cagr.constant"() {elided, name = "val_12"} : () -> tensor<i64>
    %78 = "cagr.gather"(%arg0, %77) {name = "node_select_11", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %79 = "cagr.constant"() {elided, name = "emb.embs.11.weight"} : () -> tensor<1000x16xf32>
    %80 = "cagr.gather"(%79, %78) {name = "node_embedding_11", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %81 = "cagr.unsqueeze"(%80) {name = "node_Unsqueeze_46", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %82 = "cagr.constant"() {elided, name = "linear.embs.11.weight"} : () -> tensor<1000x1xf32>
    %83 = "cagr.gather"(%82, %78) {name = "node_embedding_33", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %84 = "cagr.constant"() {elided, name = "val_13"} : () -> tensor<i64>
    %85 = "cagr.gather"(%arg0, %84) {name = "node_select_12", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %86 = "cagr.constant"() {elided, name = "emb.embs.12.weight"} : () -> tensor<5x16xf32>
    %87 = "cagr.gather"(%86, %85) {name = "node_embedding_12", axis = 0 : i64} : (tensor<5x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %88 = "cagr.unsqueeze"(%87) {name = "node_Unsqueeze_48", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %89 = "cagr.constant"() {elided, name = "linear.embs.12.weight"} : () -> tensor<5x1xf32>
    %90 = "cagr.gather"(%89, %85) {name = "node_embedding_34", axis = 0 : i64} : (tensor<5x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %91 = "cagr.constant"() {elided, name = "val_14"} : () -> tensor<i64>
    %92 = "cagr.gather"(%arg0, %91) {name = "node_select_13", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %93 = "cagr.constant"() {elided, name = "emb.embs.13.weight"} : () -> tensor<4x16xf32>
    %94 = "cagr.gather"(%93, %92) {name = "node_embedding_13", axis = 0 : i64} : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %95 = "cagr.unsqueeze"(%94) {name = "node_Unsqueeze_50", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %96 = "cagr.constant"() {elided, name = "linear.embs.13.weight"} : () -> tensor<4x1xf32>
    %97 = "cagr.gather"(%96, %92) {name = "node_embedding_35", axis = 0 : i64} : (tensor<4x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %98 = "cagr.constant"() {elided, name = "val_15"} : () -> tensor<i64>
    %99 = "cagr.gather"(%arg0, %98) {name = "node_select_14", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %100 = "cagr.constant"() {elided, name = "emb.embs.14.weight"} : () -> tensor<1000x16xf32>
    %101 = "cagr.gather"(%100, %99) {name = "node_embedding_14", axis = 0 : i64} : (tensor<1000x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %102 = "cagr.unsqueeze"(%101) {name = "node_Unsqueeze_52", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %103 = "cagr.constant"() {elided, name = "linear.embs.14.weight"} : () -> tensor<1000x1xf32>
    %104 = "cagr.gather"(%103, %99) {name = "node_embedding_36", axis = 0 : i64} : (tensor<1000x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %105 = "cagr.constant"() {elided, name = "val_16"} : () -> tensor<i64>
    %106 = "cagr.gather"(%arg0, %105) {name = "node_select_15", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %107 = "cagr.constant"() {elided, name = "emb.embs.15.weight"} : () -> tensor<8x16xf32>
    %108 = "cagr.gather"(%107, %106) {name = "node_embedding_15", axis = 0 : i64} : (tensor<8x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %109 = "cagr.unsqueeze"(%108) {name = "node_Unsqueeze_54", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %110 = "cagr.constant"() {elided, name = "linear.embs.15.weight"} : () -> tensor<8x1xf32>
    %111 = "cagr.gather"(%110, %106) {name = "node_embedding_37", axis = 0 : i64} : (tensor<8x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %112 = "cagr.constant"() {elided, name = "val_17"} : () -> tensor<i64>
    %113 = "cagr.gather"(%arg0, %112) {name = "node_select_16", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %114 = "cagr.constant"() {elided, name = "emb.embs.16.weight"} : () -> tensor<9x16xf32>
    %115 = "cagr.gather"(%114, %113) {name = "node_embedding_16", axis = 0 : i64} : (tensor<9x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %116 = "cagr.unsqueeze"(%115) {name = "node_Unsqueeze_56", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %117 = "cagr.constant"() {elided, name = "linear.embs.16.weight"} : () -> tensor<9x1xf32>
    %118 = "cagr.gather"(%117, %113) {name = "node_embedding_38", axis = 0 : i64} : (tensor<9x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %119 = "cagr.constant"() {elided, name = "val_18"} : () -> tensor<i64>
    %120 = "cagr.gather"(%arg0, %119) {name = "node_select_17", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %121 = "cagr.constant"() {elided, name = "emb.embs.17.weight"} : () -> tensor<435x16xf32>
    %122 = "cagr.gather"(%121, %120) {name = "node_embedding_17", axis = 0 : i64} : (tensor<435x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %123 = "cagr.unsqueeze"(%122) {name = "node_Unsqueeze_58", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %124 = "cagr.constant"() {elided, name = "linear.embs.17.weight"} : () -> tensor<435x1xf32>
    %125 = "cagr.gather"(%124, %120) {name = "node_embedding_39", axis = 0 : i64} : (tensor<435x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %126 = "cagr.constant"() {elided, name = "val_19"} : () -> tensor<i64>
    %127 = "cagr.gather"(%arg0, %126) {name = "node_select_18", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %128 = "cagr.constant"() {elided, name = "emb.embs.18.weight"} : () -> tensor<4x16xf32>
    %129 = "cagr.gather"(%128, %127) {name = "node_embedding_18", axis = 0 : i64} : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %130 = "cagr.unsqueeze"(%129) {name = "node_Unsqueeze_60", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %131 = "cagr.constant"() {elided, name = "linear.embs.18.weight"} : () -> tensor<4x1xf32>
    %132 = "cagr.gather"(%131, %127) {name = "node_embedding_40", axis = 0 : i64} : (tensor<4x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %133 = "cagr.constant"() {elided, name = "val_20"} : () -> tensor<i64>
    %134 = "cagr.gather"(%arg0, %133) {name = "node_select_19", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %135 = "cagr.constant"() {elided, name = "emb.embs.19.weight"} : () -> tensor<68x16xf32>
    %136 = "cagr.gather"(%135, %134) {name = "node_embedding_19", axis = 0 : i64} : (tensor<68x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %137 = "cagr.unsqueeze"(%136) {name = "node_Unsqueeze_62", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %138 = "cagr.constant"() {elided, name = "linear.embs.19.weight"} : () -> tensor<68x1xf32>
    %139 = "cagr.gather"(%138, %134) {name = "node_embedding_41", axis = 0 : i64} : (tensor<68x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %140 = "cagr.constant"() {elided, name = "val_21"} : () -> tensor<i64>
    %141 = "cagr.gather"(%arg0, %140) {name = "node_select_20", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %142 = "cagr.constant"() {elided, name = "emb.embs.20.weight"} : () -> tensor<172x16xf32>
    %143 = "cagr.gather"(%142, %141) {name = "node_embedding_20", axis = 0 : i64} : (tensor<172x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %144 = "cagr.unsqueeze"(%143) {name = "node_Unsqueeze_64", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %145 = "cagr.constant"() {elided, name = "linear.embs.20.weight"} : () -> tensor<172x1xf32>
    %146 = "cagr.gather"(%145, %141) {name = "node_embedding_42", axis = 0 : i64} : (tensor<172x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %147 = "cagr.constant"() {elided, name = "val_22"} : () -> tensor<i64>
    %148 = "cagr.gather"(%arg0, %147) {name = "node_select_21", axis = 1 : i64} : (tensor<?x22xi64>, tensor<i64>) -> tensor<?xi64>
    %149 = "cagr.constant"() {elided, name = "emb.embs.21.weight"} : () -> tensor<60x16xf32>
    %150 = "cagr.gather"(%149, %148) {name = "node_embedding_21", axis = 0 : i64} : (tensor<60x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %151 = "cagr.unsqueeze"(%150) {name = "node_Unsqueeze_66", axes = [1]} : (tensor<?x16xf32>) -> tensor<?x1x16xf32>
    %152 = "cagr.concat"(%4, %11, %18, %25, %32, %39, %46, %53, %60, %67, %74, %81, %88, %95, %102, %109, %116, %123, %130, %137, %144, %151) {name = "node_stack", axis = 1 : i64} : (tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>) -> tensor<?x22x16xf32>
    %153 = "cagr.reshape"(%152) {name = "node_Reshape_79", shape = [-1, 352]} : (tensor<?x22x16xf32>) -> tensor<?x352xf32>
    %154 = "cagr.constant"() {elided, name = "dnn.0.weight"} : () -> tensor<400x352xf32>
    %155 = "cagr.constant"() {elided, name = "dnn.0.bias"} : () -> tensor<400xf32>
    %156 = "cagr.gemm"(%153, %154, %155) {name = "node_linear", transB = 1 : i64} : (tensor<?x352xf32>, tensor<400x352xf32>, tensor<400xf32>) -> tensor<?x400xf32>
    %157 = "cagr.relu"(%156) {name = "node_relu"} : (tensor<?x400xf32>) -> tensor<?x400xf32>
    %158 = "cagr.constant"() {elided, name = "dnn.2.weight"} : () -> tensor<400x400xf32>
    %159 = "cagr.constant"() {elided, name = "dnn.2.bias"} : () -> tensor<400xf32>
    %160 = "cagr.gemm"(%157, %158, %159) {name = "node_linear_1", transB = 1 : i64} : (tensor<?x400xf32>, tensor<400x400xf32>, tensor<400xf32>) -> tensor<?x400xf32>
    %161 = "cagr.relu"(%160) {name = "node_relu_1"} : (tensor<?x400xf32>) -> tensor<?x400xf32>
    %162 = "cagr.constant"() {elided, name = "dnn.4.weight"} : () -> tensor<400x400xf32>
    %163 = "cagr.constant"() {elided, name = "dnn.4.bias"} : () -> tensor<400xf32>
    %164 = "cagr.gemm"(%161, %162, %163) {name = "node_linear_2", transB = 1 : i64} : (tensor<?x400xf32>, tensor<400x400xf32>, tensor<400xf32>) -> tensor<?x400xf32>
    %165 = "cagr.relu"(%164) {name = "node_relu_2"} : (tensor<?x400xf32>) -> tensor<?x400xf32>
    %166 = "cagr.constant"() {elided, name = "dnn_out.weight"} : () -> tensor<1x400xf32>
    %167 = "cagr.gemm"(%165, %166) {name = "node_linear_3", transB = 1 : i64} : (tensor<?x400xf32>, tensor<1x400xf32>) -> tensor<?x1xf32>
    %168 = "cagr.fm"(%152) {name = "node_sum_1.fm", result_names = ["node_mul_1"]} : (tensor<?x22x16xf32>) -> tensor<?x1xf32>
    %169 = "cagr.constant"() {elided, name = "linear.embs.21.weight"} : () -> tensor<60x1xf32>
    %170 = "cagr.gather"(%169, %148) {name = "node_embedding_43", axis = 0 : i64} : (tensor<60x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %171 = "cagr.concat"(%6, %13, %20, %27, %34, %41, %48, %55, %62, %69, %76, %83, %90, %97, %104, %111, %118, %125, %132, %139, %146, %170) {name = "node_cat", axis = 1 : i64} : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x22xf32>
    %172 = "cagr.reduce_sum"(%171) {name = "node_sum_4", axes = [1], keepdims = 1 : i64} : (tensor<?x22xf32>) -> tensor<?x1xf32>
    %173 = "cagr.constant"() {elided, name = "linear.bias"} : () -> tensor<1xf32>
    %174 = "cagr.add"(%172, %173) {name = "node_add"} : (tensor<?x1xf32>, tensor<1xf32>) -> tensor<?x1xf32>
    %175 = "cagr.add"(%174, %168) {name = "node_add_1"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    %176 = "cagr.add"(%175, %167) {name = "node_add_2"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    %177 = "cagr.sigmoid"(%176) {name = "node_sigmoid"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%177) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["sparse"], input_dims = ["N,22"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
