package diff

import (
	"fmt"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// Compare two captures of three training steps each: the test's steps are
// 2 ms shorter, well outside their 0.5 ms step-to-step variation.
func ExampleCompare() {
	base := Side{Name: "before", Bundle: bundle("before", "NVIDIA H100 80GB HBM3", 10.0e6, 10.5e6, 11.0e6)}
	test := Side{Name: "after", Bundle: bundle("after", "NVIDIA H100 80GB HBM3", 8.0e6, 8.5e6, 9.0e6)}
	d, err := Compare(base, test, evidence.Filter{})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := d.Changes[0]
	fmt.Printf("%s: %s, t = %.1f\n", c.Name, c.Verdict, c.T)
	fmt.Println(d.Warning() == "")
	// Output:
	// step time: significant, t = -4.9
	// true
}
