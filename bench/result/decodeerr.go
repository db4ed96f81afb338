package result

import (
	"reflect"

	"github.com/stormbench/stormbench/bench/decodeerror"
)

// explainDecodeError words err, the error of decoding data as a result
// document, with the field path of the first value that does not fit
// (see package decodeerror).
func explainDecodeError(data []byte, err error) error {
	return decodeerror.Explain(data, reflect.TypeFor[Result](), err, decodeerror.Expected{
		reflect.TypeFor[Point](): "a point [t, v] of two numbers",
	})
}
