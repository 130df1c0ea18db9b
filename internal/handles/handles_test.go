package handles

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type thing struct{ n int }

func TestRegistryLifecycle(t *testing.T) {
	var r Registry[thing]
	a := &thing{1}
	key := r.Save(a)
	require.NotNil(t, key)

	got, ok := r.Get(key)
	require.True(t, ok)
	require.Same(t, a, got)
	require.EqualValues(t, 1, r.Live())

	released, ok := r.Release(key)
	require.True(t, ok)
	require.Same(t, a, released)

	_, ok = r.Get(key)
	require.False(t, ok, "a released key must not resolve")
	_, ok = r.Release(key)
	require.False(t, ok, "a second release must be harmless")
	require.EqualValues(t, 0, r.Live())
}

func TestRegistryRejectsUnknownKeys(t *testing.T) {
	var r Registry[thing]
	var other Registry[struct{}]
	foreign := other.Save(&struct{}{})
	cases := []struct {
		name string
		key  unsafe.Pointer
	}{
		{"nil", nil},
		{"never issued", unsafe.Pointer(&thing{})},
		{"issued by a registry of another type", foreign},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := r.Get(tc.key)
			require.False(t, ok)
			_, ok = r.Release(tc.key)
			require.False(t, ok)
		})
	}
}

// TestKeysAreNeverReused creates and frees many values and checks that no
// key is ever handed out twice, which is what makes stale handles detectable.
func TestKeysAreNeverReused(t *testing.T) {
	var r Registry[thing]
	seen := make(map[unsafe.Pointer]bool)
	var stale []unsafe.Pointer
	for i := 0; i < 20000; i++ {
		key := r.Save(&thing{i})
		require.False(t, seen[key], "key reused after %d cycles", i)
		seen[key] = true
		_, ok := r.Release(key)
		require.True(t, ok)
		if i%1000 == 0 {
			stale = append(stale, key)
		}
	}
	for _, key := range stale {
		_, ok := r.Get(key)
		require.False(t, ok)
	}
}

func TestConcurrentSaveGetRelease(t *testing.T) {
	var r Registry[thing]
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				v := &thing{i}
				key := r.Save(v)
				if got, ok := r.Get(key); !ok || got != v {
					errs <- "lookup failed"
					return
				}
				if _, ok := r.Release(key); !ok {
					errs <- "release failed"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	require.EqualValues(t, 0, r.Live())
}
