package helper

import "golang.org/x/sys/unix"

// nativeAudit is the AUDIT_ARCH of this build's syscalls; foreignSyscallBit
// marks the x32 ABI's numbers, refused by the filter.
const (
	nativeAudit       = unix.AUDIT_ARCH_X86_64
	foreignSyscallBit = 0x40000000
)
