// Package types holds the generic shapes the generated bindings use for WIT's
// result, option, tuple and unit types.
//
// The bindings under imports/ and exports/wit_exports are written by the Go
// generator of wit-bindgen 0.63.0, which expects these types at
// go.bytecodealliance.org/pkg/wit/types. That module is not on the Go module
// proxy, so this SDK carries its own implementation of the same API and the
// generated files import it from here (see host/author/src/build/go.rs).
package types

// Tags of Result.
const (
	ResultOk  = 0
	ResultErr = 1
)

// Result is WIT's result<T, U>: either an Ok value or an Err value.
type Result[T any, U any] struct {
	tag uint8
	ok  T
	err U
}

// Ok makes a successful Result.
func Ok[T any, U any](value T) Result[T, U] { return Result[T, U]{tag: ResultOk, ok: value} }

// Err makes a failed Result.
func Err[T any, U any](value U) Result[T, U] { return Result[T, U]{tag: ResultErr, err: value} }

// Tag is ResultOk or ResultErr.
func (r Result[T, U]) Tag() uint8 { return r.tag }

// IsOk tells whether r holds a value.
func (r Result[T, U]) IsOk() bool { return r.tag == ResultOk }

// IsErr tells whether r holds an error.
func (r Result[T, U]) IsErr() bool { return r.tag == ResultErr }

// Ok is the value; it panics when r is an error.
func (r Result[T, U]) Ok() T {
	if r.tag != ResultOk {
		panic("wit result: Ok called on an error")
	}
	return r.ok
}

// Err is the error; it panics when r is a value.
func (r Result[T, U]) Err() U {
	if r.tag != ResultErr {
		panic("wit result: Err called on a value")
	}
	return r.err
}

// Tags of Option.
const (
	OptionNone = 0
	OptionSome = 1
)

// Option is WIT's option<T>.
type Option[T any] struct {
	tag   uint8
	value T
}

// Some makes an Option holding value.
func Some[T any](value T) Option[T] { return Option[T]{tag: OptionSome, value: value} }

// None makes an empty Option.
func None[T any]() Option[T] { return Option[T]{tag: OptionNone} }

// Tag is OptionNone or OptionSome.
func (o Option[T]) Tag() uint8 { return o.tag }

// IsSome tells whether o holds a value.
func (o Option[T]) IsSome() bool { return o.tag == OptionSome }

// IsNone tells whether o is empty.
func (o Option[T]) IsNone() bool { return o.tag == OptionNone }

// Some is the value; it panics when o is empty.
func (o Option[T]) Some() T {
	if o.tag != OptionSome {
		panic("wit option: Some called on None")
	}
	return o.value
}

// SomeOr is the value, or fallback when o is empty.
func (o Option[T]) SomeOr(fallback T) T {
	if o.tag != OptionSome {
		return fallback
	}
	return o.value
}

// Tuple2 is WIT's tuple<A, B>.
type Tuple2[T0 any, T1 any] struct {
	F0 T0
	F1 T1
}

// Unit is WIT's empty value (result<_, E>'s Ok).
type Unit struct{}
