package site

import "testing"

// The free lists keep at most their bound, and a render buffer grown past
// maxKeptBuffer is not kept.
func TestFreeList_Bounded(t *testing.T) {
	l := NewFreeList[int](2)
	for i := range 5 {
		l.Put(i)
	}
	var got []int
	for x, ok := l.Get(); ok; x, ok = l.Get() {
		got = append(got, x)
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("kept %v, want [0 1]", got)
	}

	buffers := RenderBufferList{NewFreeList[*CappedBuffer](2)}
	big := buffers.Take(1 << 30)
	big.Write(make([]byte, MaxKeptBuffer+1))
	buffers.Release(big)
	if _, ok := buffers.Get(); ok {
		t.Error("a render buffer over maxKeptBuffer was kept")
	}
	small := buffers.Take(1 << 30)
	small.WriteString("an answer")
	buffers.Release(small)
	if b := buffers.Take(10); b != small || b.Len() != 0 || b.Max != 10 {
		t.Errorf("took %p holding %d bytes, cap %d; want the released buffer %p, empty, with cap 10", b, b.Len(), b.Max, small)
	}
}
