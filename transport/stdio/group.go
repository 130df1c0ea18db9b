package stdio

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// signalGroup sends sig to every process in the group. ESRCH (nothing
// left) is not an error worth reporting: the goal was an empty group.
// Only a server's own group is ever signalled: kill(2) reads a pgid of 0
// as the caller's group (the host's own) and 1 as every process it may
// signal, so those, and anything below, are refused.
func signalGroup(pgid int, sig syscall.Signal) {
	if !serverGroup(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, sig)
}

// serverGroup reports whether pgid can be a server's group: a child's pid,
// never 0 or 1 (init's).
func serverGroup(pgid int) bool { return pgid > 1 }

// groupAlive reports whether the group still has a member that is not a
// zombie. kill(-pgid, 0) alone would say yes for as long as a killed
// grandchild waits to be reaped by init, and in containers whose PID 1
// never reaps that is forever, so every Close would sit out its grace
// periods; /proc tells zombies apart.
func groupAlive(pgid int) bool {
	if !serverGroup(pgid) || syscall.Kill(-pgid, 0) != nil {
		return false
	}
	alive, ok := liveMemberInProc(pgid)
	if !ok {
		return true // no usable /proc: trust kill
	}
	return alive
}

// liveMemberInProc scans /proc for a non-zombie process whose process group
// is pgid. ok is false when /proc cannot be read.
func liveMemberInProc(pgid int) (alive, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return false, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, false
	}
	var buf [512]byte
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		st, ok := procStat("/proc/"+name+"/stat", buf[:])
		if ok && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			return true, true
		}
	}
	return false, true
}

// procStatus is what this package reads of a /proc/PID/stat file.
type procStatus struct {
	state byte
	pgrp  int
	flags uint64 // the kernel's task flags (PF_*)
}

// procStat reads a /proc/PID/stat file. The command name in parentheses
// may contain anything, spaces and parentheses included, so fields are
// counted from the last ')'.
func procStat(path string, buf []byte) (st procStatus, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return st, false
	}
	n, _ := f.Read(buf)
	f.Close()
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	// After ") ": state ppid pgrp session tty_nr tpgid flags ...
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 7 || len(fields[0]) != 1 {
		return st, false
	}
	g, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return st, false
	}
	fl, err := strconv.ParseUint(string(fields[6]), 10, 64)
	if err != nil {
		return st, false
	}
	return procStatus{state: fields[0][0], pgrp: g, flags: fl}, true
}

// pPID is waitid's idtype for a process id; pfExiting is the kernel's
// PF_EXITING task flag, set as a process starts to exit.
const (
	pPID      = 1
	pfExiting = 0x4
)

// ending tells how far the child pid is on its way out. exited: reaped
// already (ECHILD) or a zombie (waitid with WNOWAIT sees it, leaving the
// reap to its waiter), so its reap is certain. exiting: its thread group
// leader is inside the kernel's exit (PF_EXITING, or a zombie leader in
// /proc/PID/stat), which closes the files before the process is a zombie;
// but a leader can end before the other threads, so this one is likely,
// not certain.
func ending(pid int) (exited, exiting bool) {
	var si siginfo
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&si)),
		syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	if errno == syscall.ECHILD || errno == 0 && si.pid() == int32(pid) {
		return true, true
	}
	var buf [512]byte
	st, ok := procStat("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	return false, ok && (st.state == 'Z' || st.state == 'X' || st.flags&pfExiting != 0)
}
