// Package runtime is the memory side of the canonical ABI for the generated
// bindings: aligned allocations the garbage collector keeps in place while
// the host reads or writes them, and the module's cabi_realloc export.
//
// It implements the API wit-bindgen 0.63.0's Go generator expects at
// go.bytecodealliance.org/pkg/wit/runtime (see ../types for why it lives here).
package runtime

import (
	"runtime"
	"unsafe"
)

// Allocate returns size bytes aligned to align, pinned by pinner until the
// caller unpins it. Size 0 gives nil.
func Allocate(pinner *runtime.Pinner, size, align uintptr) unsafe.Pointer {
	p := allocate(size, align)
	if p != nil {
		pinner.Pin(p)
	}
	return p
}

// allocate makes Go memory with the alignment asked for: the element type of
// the backing slice carries it.
func allocate(size, align uintptr) unsafe.Pointer {
	if size == 0 {
		return nil
	}
	words := func(n uintptr) uintptr { return (size + n - 1) / n }
	switch align {
	case 1:
		return unsafe.Pointer(unsafe.SliceData(make([]byte, size)))
	case 2:
		return unsafe.Pointer(unsafe.SliceData(make([]uint16, words(2))))
	case 4:
		return unsafe.Pointer(unsafe.SliceData(make([]uint32, words(4))))
	case 8:
		return unsafe.Pointer(unsafe.SliceData(make([]uint64, words(8))))
	default:
		panic("cabi allocation: unsupported alignment")
	}
}

// reallocPins keeps what the host asked cabi_realloc for (arguments of an
// export call) until the export has read it.
var reallocPins runtime.Pinner

// Unpin releases the memory cabi_realloc handed out for the current call.
func Unpin() { reallocPins.Unpin() }
