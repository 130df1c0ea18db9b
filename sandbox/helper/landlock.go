package helper

import (
	"golang.org/x/sys/unix"
)

// abiRights is what one Landlock ABI version can handle: its file system
// and network rights and its scopes. landlockABIs holds one entry per
// version, as go-landlock's abiInfos does; a kernel newer than the table
// is used as its last entry, whose rights it has too.
type abiRights struct {
	fs, net, scoped uint64
}

const (
	fsRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsV1 = fsRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsV2   = fsV1 | unix.LANDLOCK_ACCESS_FS_REFER
	fsV3   = fsV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsV5   = fsV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	netV4  = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopes = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	// fileRights are the rights that make sense on a file (rather than a
	// directory); Landlock refuses a rule on a file with any other.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

var landlockABIs = []abiRights{
	0: {},
	1: {fs: fsV1},
	2: {fs: fsV2},
	3: {fs: fsV3},
	4: {fs: fsV3, net: netV4},
	5: {fs: fsV5, net: netV4},
	6: {fs: fsV5, net: netV4, scoped: scopes},
	7: {fs: fsV5, net: netV4, scoped: scopes}, // audit logging flags only
}

// erratumSignalScope is the bit LANDLOCK_CREATE_RULESET_ERRATA sets once
// the kernel has the ABI 6 fix to signal scoping (erratum 2: before it,
// the threads of a sandboxed process could not always signal each other).
// Without it LANDLOCK_SCOPE_SIGNAL is not asked for.
const erratumSignalScope = 1 << 1

// rightsFor is what the kernel with this ABI and errata bitmask handles.
func rightsFor(abi int, errata uint64) abiRights {
	if abi <= 0 {
		return abiRights{}
	}
	r := landlockABIs[min(abi, len(landlockABIs)-1)]
	if abi >= 6 && errata&erratumSignalScope == 0 {
		r.scoped &^= unix.LANDLOCK_SCOPE_SIGNAL
	}
	return r
}

// kernelABI is the kernel's Landlock ABI version and errata bitmask; an
// error (ENOSYS, EOPNOTSUPP when disabled at boot) means no Landlock.
func kernelABI() (abi int, errata uint64, err error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, 0, errno
	}
	if int(v) >= 6 {
		// Only kernels with ABI 6 and later know the errata flag.
		if e, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA); errno == 0 {
			errata = uint64(e)
		}
	}
	return int(v), errata, nil
}

// rightNames name the rights for the report, as the kernel's constants
// without their LANDLOCK_ACCESS_ and LANDLOCK_SCOPE_ prefixes.
var (
	fsRightNames = []struct {
		bit  uint64
		name string
	}{
		{unix.LANDLOCK_ACCESS_FS_EXECUTE, "FS_EXECUTE"}, {unix.LANDLOCK_ACCESS_FS_WRITE_FILE, "FS_WRITE_FILE"},
		{unix.LANDLOCK_ACCESS_FS_READ_FILE, "FS_READ_FILE"}, {unix.LANDLOCK_ACCESS_FS_READ_DIR, "FS_READ_DIR"},
		{unix.LANDLOCK_ACCESS_FS_REMOVE_DIR, "FS_REMOVE_DIR"}, {unix.LANDLOCK_ACCESS_FS_REMOVE_FILE, "FS_REMOVE_FILE"},
		{unix.LANDLOCK_ACCESS_FS_MAKE_CHAR, "FS_MAKE_CHAR"}, {unix.LANDLOCK_ACCESS_FS_MAKE_DIR, "FS_MAKE_DIR"},
		{unix.LANDLOCK_ACCESS_FS_MAKE_REG, "FS_MAKE_REG"}, {unix.LANDLOCK_ACCESS_FS_MAKE_SOCK, "FS_MAKE_SOCK"},
		{unix.LANDLOCK_ACCESS_FS_MAKE_FIFO, "FS_MAKE_FIFO"}, {unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK, "FS_MAKE_BLOCK"},
		{unix.LANDLOCK_ACCESS_FS_MAKE_SYM, "FS_MAKE_SYM"}, {unix.LANDLOCK_ACCESS_FS_REFER, "FS_REFER"},
		{unix.LANDLOCK_ACCESS_FS_TRUNCATE, "FS_TRUNCATE"}, {unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, "FS_IOCTL_DEV"},
	}
	netRightNames = []struct {
		bit  uint64
		name string
	}{{unix.LANDLOCK_ACCESS_NET_BIND_TCP, "NET_BIND_TCP"}, {unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, "NET_CONNECT_TCP"}}
	scopeNames = []struct {
		bit  uint64
		name string
	}{{unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, "ABSTRACT_UNIX_SOCKET"}, {unix.LANDLOCK_SCOPE_SIGNAL, "SIGNAL"}}
)

// names lists the names of the bits set in v.
func names(v uint64, table []struct {
	bit  uint64
	name string
}) []string {
	var out []string
	for _, t := range table {
		if v&t.bit != 0 {
			out = append(out, t.name)
		}
	}
	return out
}
