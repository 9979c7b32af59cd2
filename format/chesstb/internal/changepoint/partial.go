package changepoint

import (
	"encoding/binary"
	"fmt"
)

// LookupPrefix finds the record of position pos from head, the first bytes
// of a block's decompressed payload of total bytes, so a reader can stop
// decompressing once it has the bytes one position needs: the header, the
// state vector up to pos, and the stream up to its record (for a MULTI
// record, the directory too). When head is too short it returns need, a
// length past len(head) to decompress before asking again; otherwise need is
// 0 and rec is the record.
//
// It checks the header, the bounds of every stream it touches, the record it
// returns and every record of the same shape it walks past, but not the rest
// of the block: Decode checks everything once the whole payload is there.
// On a valid block its record is the one Decode's Lookup returns.
func LookupPrefix(head []byte, total int, p Params, pos int) (rec Record, need int, err error) {
	if err := p.check(); err != nil {
		return Record{}, 0, err
	}
	if total < headerBytes {
		return Record{}, 0, corrupt("payload of %d bytes is shorter than its %d-byte header", total, headerBytes)
	}
	if len(head) > total {
		return Record{}, 0, fmt.Errorf("changepoint: %d bytes of a %d-byte payload", len(head), total)
	}
	if pos < 0 || pos >= p.Positions {
		return Record{}, 0, fmt.Errorf("changepoint: position %d outside a block of %d", pos, p.Positions)
	}
	if len(head) < headerBytes {
		return Record{}, headerBytes, nil
	}
	le := binary.LittleEndian
	np := le.Uint32(head[0:])
	ns := uint64(le.Uint32(head[4:]))
	nd := uint64(le.Uint32(head[8:]))
	nm := uint64(le.Uint32(head[12:]))
	ssBytes := uint64(le.Uint32(head[16:]))
	dsBytes := uint64(le.Uint32(head[20:]))
	if uint64(np) != uint64(p.Positions) {
		return Record{}, 0, corrupt("payload holds %d positions, the table says %d", np, p.Positions)
	}
	if ns+nd+nm > uint64(np) {
		return Record{}, 0, corrupt("%d+%d+%d non-constant records exceed %d positions", ns, nd, nm, np)
	}
	eb := uint64(p.EntryBytes)
	nConst := uint64(np) - ns - nd - nm
	// Stream offsets, as Decode lays them out; all within 2^38 here, so
	// the sums cannot overflow.
	constOff := uint64(headerBytes) + (uint64(p.Positions)*2+7)/8
	singleOff := constOff + nConst*eb
	doubleOff := singleOff + ssBytes
	dirOff := doubleOff + dsBytes
	dirOff += (4 - dirOff&3) & 3
	multiOff := dirOff + (nm+1)*4
	if multiOff > uint64(total) {
		return Record{}, 0, corrupt("streams of %d bytes run past the %d-byte payload", multiOff, total)
	}
	if n := headerBytes + pos>>2 + 1; len(head) < n {
		return Record{}, n, nil
	}
	b := &Block{p: p, bm: BitmapBytes(p.Layers), states: head[headerBytes:min(uint64(len(head)), constOff)]}
	st := b.stateAt(pos)
	idx := uint64(b.countBefore(st, 0, pos))
	rec = Record{State: st, b: b}
	switch st {
	case Const:
		if idx >= nConst {
			return Record{}, 0, corrupt("state vector holds more than the %d constant records", nConst)
		}
		off := constOff + idx*eb
		if uint64(len(head)) < off+eb {
			return Record{}, int(off + eb), nil
		}
		rec.entry = head[off : off+eb]
		if err := b.checkRank(rec.entry, "constant", int(idx)); err != nil {
			return Record{}, 0, err
		}
		return rec, 0, nil
	case Single, Double:
		n, lo, hi, widest := ns, singleOff, doubleOff, 1+2*eb
		what := "single"
		if st == Double {
			n, lo, hi, widest = nd, doubleOff, doubleOff+dsBytes, 2+3*eb
			what = "double"
		}
		if idx >= n {
			return Record{}, 0, corrupt("state vector holds more than the %d %s records", n, what)
		}
		// The records are of two widths, so record idx is found by
		// walking its predecessors.
		off := lo
		for j := uint64(0); ; j++ {
			if end := min(off+widest, hi); uint64(len(head)) < end {
				// Ask for the rest at the widest width, so one more
				// round of decompressing is enough.
				return Record{}, int(min(off+(idx-j+1)*widest, hi)), nil
			}
			var w int
			s := head[off:min(hi, uint64(len(head)))]
			if st == Single {
				w, rec.DrawEnd, err = b.checkSingle(s, int(j))
			} else {
				w, rec.DrawEnd, err = b.checkDouble(s, int(j))
			}
			if err != nil {
				return Record{}, 0, err
			}
			if j == idx {
				rec.entry = head[off : off+uint64(w)]
				return rec, 0, nil
			}
			off += uint64(w)
		}
	}
	if idx >= nm {
		return Record{}, 0, corrupt("state vector holds more than the %d multi records", nm)
	}
	dir := dirOff + 4*idx
	if uint64(len(head)) < dir+8 {
		return Record{}, int(dir + 8), nil
	}
	lo, hi := uint64(le.Uint32(head[dir:])), uint64(le.Uint32(head[dir+4:]))
	if hi < lo || multiOff+hi > uint64(total) {
		return Record{}, 0, corrupt("multi record %d spans bytes %d..%d of a %d-byte stream", idx, lo, hi, uint64(total)-multiOff)
	}
	if uint64(len(head)) < multiOff+hi {
		return Record{}, int(multiOff + hi), nil
	}
	rec.entry = head[multiOff+lo : multiOff+hi]
	if err := b.checkMulti(rec.entry, int(idx)); err != nil {
		return Record{}, 0, err
	}
	rec.DrawEnd = rec.entry[0]&0x80 != 0
	return rec, 0, nil
}

// check rejects parameters no pack uses.
func (p Params) check() error {
	if p.Layers < 2 || p.Layers > MaxLayers {
		return fmt.Errorf("changepoint: unsupported stack height %d", p.Layers)
	}
	if p.EntryBytes != 1 && p.EntryBytes != 2 {
		return fmt.Errorf("changepoint: unsupported rank width %d", p.EntryBytes)
	}
	if p.Positions <= 0 {
		return fmt.Errorf("changepoint: block of %d positions", p.Positions)
	}
	return nil
}
