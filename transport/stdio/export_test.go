package stdio

// SetTestLauncher makes helperConfig run the fake servers through l (mode
// names it in messages): see via_helper_test.go.
func SetTestLauncher(l Launcher, mode string) { testLauncher, viaHelper = l, mode }
