package stream

// Spares keeps up to a fixed number of values (buffers, batches) for reuse. Unlike a sync.Pool it
// keeps them across garbage collections, so a pipeline whose items hold large buffers does not
// allocate and fault them in again after each collection; unlike an unbounded list it holds no
// more than the items that can be in flight. Safe for concurrent use.
type Spares[T any] chan T

// NewSpares returns a Spares that keeps up to n values.
func NewSpares[T any](n int) Spares[T] { return make(Spares[T], n) }

// Get returns a kept value, or ok false when none is kept.
func (s Spares[T]) Get() (v T, ok bool) {
	select {
	case v = <-s:
		return v, true
	default:
		return v, false
	}
}

// Put keeps v, unless as many as the Spares holds are kept already (v is then dropped).
func (s Spares[T]) Put(v T) {
	select {
	case s <- v:
	default:
	}
}
