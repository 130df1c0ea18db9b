//go:build !amd64 && !arm64

package helper

// No filter is built here: the report says the layer is missing.
const (
	nativeAudit       = 0
	foreignSyscallBit = 0
)
