package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// HelperName is the helper executable's file name.
const HelperName = "lemonmcp-sandbox"

// HelperEnv names the environment variable that overrides where the
// helper is found.
const HelperEnv = "LEMONMCP_SANDBOX_HELPER"

// helperPath finds the helper: $LEMONMCP_SANDBOX_HELPER, else next to the
// shared object (or executable) this code is part of, else in the
// libexec directory beside its lib directory (make install). Empty when
// none is found. The result is cached; the variable is read once.
var helperPath = sync.OnceValue(func() string {
	if p := os.Getenv(HelperEnv); p != "" {
		if isExecutable(p) {
			return p
		}
		return ""
	}
	for _, dir := range ownDirs() {
		for _, p := range []string{
			filepath.Join(dir, HelperName),
			filepath.Join(dir, "..", "libexec", HelperName),
		} {
			if isExecutable(p) {
				return filepath.Clean(p)
			}
		}
	}
	return ""
})

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// ownDirs are the directories of the file that holds this code (the
// shared library, found in /proc/self/maps by the address of a function
// of ours) and of the executable.
func ownDirs() []string {
	var dirs []string
	if p := mappedFile(reflect.ValueOf(ownDirs).Pointer()); p != "" {
		dirs = append(dirs, filepath.Dir(p))
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	return dirs
}

// mappedFile is the path of the file mapped at addr, from /proc/self/maps.
func mappedFile(addr uintptr) string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && uint64(addr) >= start && uint64(addr) < end {
			return fields[5]
		}
	}
	return ""
}
