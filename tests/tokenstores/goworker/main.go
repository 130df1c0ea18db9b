// Command goworker is one process of the shared-grant test: a client of
// the Go library that calls the echo tool from many goroutines until a
// deadline and prints {"ok", "failed", "errors"} as one JSON line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

func main() {
	cfgPath := flag.String("config", "", "client configuration file")
	threads := flag.Int("threads", 4, "goroutines calling at once")
	startAt := flag.Int64("start-at", 0, "Unix ms to start at (all workers at the same instant)")
	until := flag.Int64("until", 0, "Unix ms to stop calling at")
	pause := flag.Duration("pause", 100*time.Millisecond, "pause between two calls of one goroutine (the test meets each expiry with every goroutine, not the CPU)")
	flag.Parse()
	raw, err := os.ReadFile(*cfgPath)
	if err != nil {
		fail(err.Error())
	}
	p, perr := config.Parse(raw, "goworker")
	if perr != nil {
		fail(perr.Message)
	}
	time.Sleep(time.Until(time.UnixMilli(*startAt)))
	c := core.New(p.Options, p.Transport)
	defer c.Free()
	if err := c.Connect(); err != nil {
		fail(err.Message)
	}
	if err := c.WaitReady(30 * time.Second); err != nil {
		fail(err.Message)
	}
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for i := 0; i < *threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().UnixMilli() < *until; n++ {
				_, err := c.CallSync("tools/call", []byte(fmt.Sprintf(`{"name":"echo","arguments":{"text":"g%d"}}`, n)), core.CallOptions{})
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if len(errs) < 5 {
						errs = append(errs, err.Status.String()+": "+err.Message)
					}
					mu.Unlock()
				} else {
					ok.Add(1)
				}
				time.Sleep(*pause)
			}
		}()
	}
	wg.Wait()
	c.Close(5 * time.Second)
	out, _ := json.Marshal(map[string]any{"ok": ok.Load(), "failed": failed.Load(), "errors": errs})
	fmt.Println(string(out))
}

func fail(msg string) {
	out, _ := json.Marshal(map[string]any{"ok": 0, "failed": 1, "errors": []string{msg}})
	fmt.Println(string(out))
	os.Exit(1)
}
