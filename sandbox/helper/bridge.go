package helper

import (
	"io"
	"net"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// startBridge runs inside the server's network namespace: it brings the
// loopback interface up, listens on a loopback port and forwards each
// connection to the library's proxy socket, a file the mount namespace
// still shares. It returns the proxy URL for the server's environment.
func startBridge(socket string) (string, error) {
	if err := loopbackUp(); err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, socket)
		}
	}()
	return "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

func forward(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}

// loopbackUp sets IFF_UP on lo; a new network namespace starts with it down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// proxyEnv is the environment that sends a server's HTTP(S) through the
// proxy: the usual variables in both cases, NODE_USE_ENV_PROXY (without
// which Node's fetch ignores them), and npm's own proxy settings (which,
// from the environment, also win over any .npmrc). Whatever proxy setting
// the server's environment brought is dropped first, in any case and
// spelling, NO_PROXY and npm's noproxy among them: none may send a request
// elsewhere or around the proxy.
func proxyEnv(env []string, url string) []string {
	out := make([]string, 0, len(env)+9)
	for _, kv := range env {
		k, _, _ := cutEnv(kv)
		if !proxySetting(k) {
			out = append(out, kv)
		}
	}
	return append(out, "HTTP_PROXY="+url, "HTTPS_PROXY="+url, "http_proxy="+url, "https_proxy="+url,
		"ALL_PROXY="+url, "all_proxy="+url, "NODE_USE_ENV_PROXY=1",
		"npm_config_proxy="+url, "npm_config_https_proxy="+url)
}

// proxySettings are the variables, in lower case with "-" as "_", that
// choose or bypass a proxy: the conventional ones (npm's agent also reads a
// bare "proxy"), Node's switch, and npm's (npm reads npm_config_* in any
// case).
var proxySettings = map[string]bool{
	"http_proxy": true, "https_proxy": true, "all_proxy": true, "no_proxy": true, "proxy": true,
	"ftp_proxy": true, "node_use_env_proxy": true,
	"npm_config_proxy": true, "npm_config_https_proxy": true, "npm_config_http_proxy": true,
	"npm_config_noproxy": true, "npm_config_no_proxy": true,
}

func proxySetting(name string) bool {
	return proxySettings[strings.ReplaceAll(strings.ToLower(name), "-", "_")]
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
