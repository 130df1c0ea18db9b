# Benchmarks, side by side with the peers on the same servers. Figures are
# for ratios within one run: the machines are shared and noisy.
.PHONY: bench bench-go
BENCH_COUNT ?= 3

bench: bench-go python-bench

bench-go: lib fixtures
	cd tests && $(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./bench/
	$(GO) test -run '^$$' -bench . -benchmem ./transport/stdio/
