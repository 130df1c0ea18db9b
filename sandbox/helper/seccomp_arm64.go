package helper

import "golang.org/x/sys/unix"

// nativeAudit is the AUDIT_ARCH of this build's syscalls (arm64 has no
// second ABI in the same numbers).
const (
	nativeAudit       = unix.AUDIT_ARCH_AARCH64
	foreignSyscallBit = 0
)
