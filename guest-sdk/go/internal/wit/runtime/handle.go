package runtime

// Handle holds a resource handle the host gave (0: none, which the canonical
// ABI never uses for a live handle). The generated resource types keep one
// each: Use borrows it for a call, Take moves it out (a call that consumes the
// resource), and TakeOrNil empties it for a drop.
type Handle struct {
	value int32
}

// MakeHandle holds value; a zero value is a bug in the bindings.
func MakeHandle(value int32) *Handle {
	if value == 0 {
		panic("wit resource: the host gave a zero handle")
	}
	return &Handle{value: value}
}

// Use is the handle, which stays held (a borrow).
func (h *Handle) Use() int32 {
	if h.value == 0 {
		panic("wit resource: used after it was dropped or given away")
	}
	return h.value
}

// Take is the handle, which is no longer held (the callee owns it now).
func (h *Handle) Take() int32 {
	value := h.Use()
	h.value = 0
	return value
}

// TakeOrNil is the handle, or 0 when none is held; nothing is held after it.
func (h *Handle) TakeOrNil() int32 {
	value := h.value
	h.value = 0
	return value
}

// Set holds value again (a handle a call gave back).
func (h *Handle) Set(value int32) {
	if value == 0 {
		panic("wit resource: the host gave a zero handle")
	}
	if h.value != 0 {
		panic("wit resource: a handle is already held")
	}
	h.value = value
}
