package helper

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// reaper ends every process below the helper. As the init of a PID
// namespace it reaches them all with kill(-1); as a subreaper it finds them
// in /proc by their parent links, which orphans keep pointing at it.
type reaper struct {
	self int
	init bool // init of a PID namespace

	server     int                // the server's pid
	serverWs   syscall.WaitStatus // how it ended, once serverDone
	serverDone bool
}

// reaped records the end of pid when it is the server.
func (r *reaper) reaped(pid int, ws syscall.WaitStatus) {
	if pid == r.server {
		r.serverWs, r.serverDone = ws, true
	}
}

// reapServer reaps every child that has exited and reports whether the
// server is among those reaped so far.
func (r *reaper) reapServer() bool {
	r.reapAvailable()
	return r.serverDone
}

// endAll gives what the server left behind grace to exit after SIGTERM,
// then kills what remains. A cut lifeline ends the grace at once.
func (r *reaper) endAll(grace time.Duration, sigs <-chan os.Signal, cut <-chan struct{}) {
	if !r.signalAll(syscall.SIGTERM) {
		return
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		if !r.reapAvailable() {
			return
		}
		select {
		case <-sigs:
		case <-timer.C:
			r.killAll()
			return
		case <-cut:
			r.killAll()
			return
		}
	}
}

// reapAvailable reaps exited children and reports whether any child is
// left.
func (r *reaper) reapAvailable() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return false // ECHILD: nothing left
		case pid == 0:
			return true
		}
		r.reaped(pid, ws)
	}
}

// killAll SIGKILLs every descendant and reaps until none is left. A
// process that forks between a scan and the kill is caught by the next
// scan: its parent's death wakes the wait.
func (r *reaper) killAll() {
	for {
		r.signalAll(syscall.SIGKILL)
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err != nil && err != syscall.EINTR {
			return // ECHILD: no child, hence no descendant
		}
		if err == nil {
			r.reaped(pid, ws)
		}
	}
}

// signalAll sends sig to every descendant; it reports whether there was
// one.
func (r *reaper) signalAll(sig syscall.Signal) bool {
	if r.init {
		// kill(-1) from a namespace's init reaches every other process of
		// the namespace and nothing outside it.
		return syscall.Kill(-1, sig) == nil
	}
	pids := descendants(r.self)
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids) > 0
}

// descendants lists the processes below root, from /proc's parent links.
func descendants(root int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]int{}
	var buf [512]byte
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid, buf[:]); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the parent pid from /proc/PID/stat. The command name in
// parentheses may hold anything, so fields are counted from the last ')'.
func parentOf(pid int, buf []byte) (int, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	n, _ := f.Read(buf)
	f.Close()
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(b[i+1:]) // state ppid ...
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, err == nil
}
