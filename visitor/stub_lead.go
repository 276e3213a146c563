package visitor

// Placeholder of the API the helper builds (removed at merge).

type Salt [16]byte

func Key(s *Salt, site, client, ua []byte) uint64 { return 0 }

const SitePrecision, PagePrecision = 12, 10

type Sketch struct {
	P uint8
	R []uint8
}

func NewSketch(p uint8) *Sketch                            { return &Sketch{P: p, R: make([]uint8, 1<<p)} }
func (s *Sketch) Add(key uint64) bool                      { return false }
func (s *Sketch) Merge(o *Sketch)                          {}
func (s *Sketch) Estimate() float64                        { return 0 }
func StdError(p uint8) float64                             { return 0 }
func (s *Sketch) Risen(sent []uint8, f func(i int, r uint8)) {}

const MaxPrecision = 16
