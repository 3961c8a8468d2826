//go:build wasip1

package runtime

import "unsafe"

// goReady turns true once this package's initializer has run: before that the
// Go heap does not exist yet, and the WASI adapter's own first allocation
// (while the runtime starts up) takes raw memory from the runtime's sbrk.
var goReady bool

func init() { goReady = true }

//go:linkname sbrk runtime.sbrk
func sbrk(n uintptr) unsafe.Pointer

// The WASI preview1 adapter reads the monotonic clock through an import,
// which the component model forbids inside cabi_realloc; the Go collector
// reads it while allocating, so the adapter is told to answer from its last
// reading while an allocation runs.
//
//go:wasmimport wasi_snapshot_preview1 adapter_monotonic_clock_set_paused
func clockPaused(paused bool)

//go:wasmexport cabi_realloc
func cabiRealloc(old unsafe.Pointer, oldSize, align, newSize uintptr) unsafe.Pointer {
	if old != nil || oldSize != 0 {
		// The host only ever asks for new memory (strings and lists of arguments).
		panic("cabi_realloc: growing an allocation is not supported")
	}
	if !goReady {
		raw := sbrk(newSize + align)
		skip := (align - uintptr(raw)%align) % align
		return unsafe.Add(raw, skip)
	}
	clockPaused(true)
	p := Allocate(&reallocPins, newSize, align)
	clockPaused(false)
	return p
}
