# The two commands a newcomer needs: `make demo` and `make test`. Both install
# what is missing (scripts/setup.sh), configure and build first.
BUILD ?= build
JOBS ?= $(shell nproc)
CAGR := $(BUILD)/cagr

.PHONY: setup build demo test clean zoo

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Imports the bundled DLRM (Criteo config, dynamo export), shows its per-node
# table, runs it on a generated Criteo-shaped batch, optimizes it for the H200
# (modelled) and runs that plan, then times the unoptimized and the optimized
# CPU plan on this host (measured).
demo: build
	@mkdir -p out
	python3 data/gen.py --dataset criteo --format dlrm --batch 256 --multi-hot 1 --cap-rows 1000 --seed 1 -o out/criteo_b256.npz
	$(CAGR) inspect zoo/onnx/dlrm_criteo.dynamo.onnx --batch 256
	$(CAGR) run zoo/onnx/dlrm_criteo.dynamo.onnx --inputs out/criteo_b256.npz --output out/dlrm_criteo_b256.out.npz
	$(CAGR) optimize zoo/onnx/dlrm_criteo.dynamo.onnx --target h200 --policy greedy --batch 4096 -o out/dlrm_criteo.h200.cagr
	$(CAGR) run out/dlrm_criteo.h200.cagr --inputs out/criteo_b256.npz --output out/dlrm_criteo_b256.plan.npz
	$(CAGR) bench zoo/onnx/dlrm_criteo.dynamo.onnx --target cpu --batch 256 --inputs out/criteo_b256.npz --seconds 1

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Re-exports the zoo (needs torch, onnx, onnxruntime: CAGR_ZOO=1 make setup).
zoo:
	python3 zoo/export.py --size small --out zoo/onnx
	python3 zoo/share_weights.py --dir zoo/onnx

clean:
	rm -rf $(BUILD) out
