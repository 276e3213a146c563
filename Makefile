# Packages whose tests lean on the test MongoDB server (FerretDB) run without the race
# detector, which slows FerretDB several-fold; every other package runs with it.
DB_PKGS   := ./flusher/... ./internal/mongotest/... ./cmd/... ./dashboard/...
PURE_PKGS := $(shell go list ./... | grep -v -e /flusher -e /internal/mongotest -e /cmd/ -e /dashboard)

# test-ahead runs the whole suite with clock.Real moved five years ahead
# (LOGTALLY_TEST_CLOCK_OFFSET, read only by test binaries): a test whose
# verdict depends on today's date fails there. CI runs it after test.
AHEAD := 43830h

.PHONY: test test-ahead lint build demo deb
test:
	go vet ./...
	go test -race -count=1 -timeout 20m $(PURE_PKGS)
	mkdir -p test-artifacts
	go test -count=1 -timeout 20m -artifacts -outputdir $(CURDIR)/test-artifacts $(DB_PKGS)

test-ahead:
	LOGTALLY_TEST_CLOCK_OFFSET=$(AHEAD) go test -count=1 -timeout 25m ./...

lint:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	go mod tidy -diff
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

build:
	go build -o bin/logtally ./cmd/logtally

demo:
	go run ./internal/cmd/demo

# dist/logtally_<version>_<arch>.deb, with nfpm (packaging/nfpm.yaml); checked
# by packaging/test-deb.sh.
deb:
	bash packaging/build-deb.sh
