package fixturebin

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Serve runs a fixture server binary with args, the way the fixtures
// serve: the first stdout line is its base URL, and it exits when its
// stdin closes. stop closes stdin and waits (killing it after 5 s).
func Serve(bin string, args ...string) (base string, stop func(), err error) {
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("%s printed no base URL: %w", bin, err)
	}
	return strings.TrimSpace(line), stop, nil
}
