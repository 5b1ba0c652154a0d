package a

func A() {}
