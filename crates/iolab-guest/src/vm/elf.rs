//! Just enough of little-endian ELF, 32- and 64-bit (armhf modules and binaries are ELF32): the machine, a
//! section's bytes (a module's `.modinfo`) and the program interpreter (`PT_INTERP`).

/// A little-endian ELF object's bytes.
pub struct Elf<'a> {
    b: &'a [u8],
    wide: bool,
}

impl<'a> Elf<'a> {
    /// `None` unless `b` starts as a little-endian ELF32 or ELF64 object.
    pub fn parse(b: &'a [u8]) -> Option<Elf<'a>> {
        match b.get(..6)? {
            b"\x7fELF\x01\x01" => Some(Elf { b, wide: false }),
            b"\x7fELF\x02\x01" => Some(Elf { b, wide: true }),
            _ => None,
        }
    }

    /// ELF64 (else ELF32).
    pub fn is_64(&self) -> bool {
        self.wide
    }

    fn u16at(&self, o: usize) -> Option<usize> {
        Some(u16::from_le_bytes(self.b.get(o..o.checked_add(2)?)?.try_into().ok()?) as usize)
    }

    fn u32at(&self, o: usize) -> Option<usize> {
        Some(u32::from_le_bytes(self.b.get(o..o.checked_add(4)?)?.try_into().ok()?) as usize)
    }

    /// An address or offset: 4 bytes in ELF32, 8 in ELF64.
    fn word(&self, o: usize) -> Option<usize> {
        if self.wide {
            usize::try_from(u64::from_le_bytes(
                self.b.get(o..o.checked_add(8)?)?.try_into().ok()?,
            ))
            .ok()
        } else {
            self.u32at(o)
        }
    }

    /// Picks the ELF32 or the ELF64 offset of a field.
    fn at(&self, narrow: usize, wide: usize) -> usize {
        if self.wide {
            wide
        } else {
            narrow
        }
    }

    /// `e_machine`.
    pub fn machine(&self) -> Option<u16> {
        self.u16at(0x12).map(|m| m as u16)
    }

    /// `size` bytes at `off`.
    fn bytes(&self, off: usize, size: usize) -> Option<&'a [u8]> {
        self.b.get(off..off.checked_add(size)?)
    }

    /// The bytes of the section named `name`.
    pub fn section(&self, name: &str) -> Option<&'a [u8]> {
        let shoff = self.word(self.at(0x20, 0x28))?;
        let (entsize, num, strndx) = (
            self.u16at(self.at(0x2E, 0x3A))?,
            self.u16at(self.at(0x30, 0x3C))?,
            self.u16at(self.at(0x32, 0x3E))?,
        );
        // Checked arithmetic throughout: the offsets come from the file (`--exe` may name anything).
        let sh = |i: usize| shoff.checked_add(i.checked_mul(entsize)?);
        let (off, size) = (self.at(0x10, 0x18), self.at(0x14, 0x20));
        let strtab = self.word(sh(strndx)?.checked_add(off)?)?;
        (0..num).find_map(|i| {
            let h = sh(i)?;
            let n = self.b.get(strtab.checked_add(self.u32at(h)?)?..)?;
            (n.split(|&c| c == 0).next()? == name.as_bytes()).then_some(())?;
            self.bytes(
                self.word(h.checked_add(off)?)?,
                self.word(h.checked_add(size)?)?,
            )
        })
    }

    /// The program interpreter a dynamically linked binary names (`PT_INTERP`); `None` for a static one.
    pub fn interpreter(&self) -> Option<String> {
        let phoff = self.word(self.at(0x1C, 0x20))?;
        let (entsize, num) = (
            self.u16at(self.at(0x2A, 0x36))?,
            self.u16at(self.at(0x2C, 0x38))?,
        );
        let (off, size) = (self.at(0x04, 0x08), self.at(0x10, 0x20));
        (0..num).find_map(|i| {
            let ph = phoff.checked_add(i.checked_mul(entsize)?)?;
            (self.u32at(ph)? == 3).then_some(())?;
            let s = self.bytes(
                self.word(ph.checked_add(off)?)?,
                self.word(ph.checked_add(size)?)?,
            )?;
            Some(String::from_utf8_lossy(s.split(|&b| b == 0).next()?).into_owned())
        })
    }
}

/// Whether the little-endian ELF `b` (32- or 64-bit) holds its whole program: a program header table and
/// a loadable segment, every segment's bytes within the file.
pub fn whole(b: &[u8]) -> bool {
    let wide = b.get(4) == Some(&2);
    let num = |o: usize, n: usize| -> Option<u64> {
        let s = b.get(o..o.checked_add(n)?)?;
        Some(s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    };
    let w = if wide { 8 } else { 4 };
    let pick = |narrow: usize, wide_at: usize| if wide { wide_at } else { narrow };
    let check = || -> Option<bool> {
        let phoff = num(pick(0x1C, 0x20), w)?;
        let entsize = num(pick(0x2A, 0x36), 2)?;
        let count = num(pick(0x2C, 0x38), 2)?;
        let len = b.len() as u64;
        if count == 0 || entsize < if wide { 56 } else { 32 } {
            return Some(false);
        }
        if phoff.checked_add(entsize.checked_mul(count)?)? > len {
            return Some(false);
        }
        let mut loads = 0;
        for i in 0..count {
            let ph = usize::try_from(phoff + i * entsize).ok()?;
            // p_type; p_offset and p_filesz.
            let (off, size) = (pick(0x04, 0x08), pick(0x10, 0x20));
            if num(ph, 4)? == 1 {
                loads += 1;
                let end = num(ph + off, w)?.checked_add(num(ph + size, w)?)?;
                if end > len {
                    return Some(false);
                }
            }
        }
        Some(loads > 0)
    };
    check().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_the_end_or_the_address_space_read_as_nothing() {
        let mut e = elf32();
        // e_shoff and e_phoff at the top of the address space: no panic, no wrapped read.
        e[0x20..0x24].copy_from_slice(&u32::MAX.to_le_bytes());
        e[0x1C..0x20].copy_from_slice(&u32::MAX.to_le_bytes());
        let f = Elf::parse(&e).unwrap();
        assert_eq!(f.section(".modinfo"), None);
        assert_eq!(f.interpreter(), None);
    }

    /// An ELF32 object laid out by hand: a section name table, a `.modinfo` section and a PT_INTERP.
    fn elf32() -> Vec<u8> {
        let mut e = vec![0u8; 52];
        e[..6].copy_from_slice(b"\x7fELF\x01\x01");
        e[0x12..0x14].copy_from_slice(&40u16.to_le_bytes());
        let put32 = |e: &mut Vec<u8>, o: usize, v: usize| {
            e[o..o + 4].copy_from_slice(&(v as u32).to_le_bytes())
        };
        let put16 =
            |e: &mut Vec<u8>, o: usize, v: u16| e[o..o + 2].copy_from_slice(&v.to_le_bytes());
        let strtab = b"\0.shstrtab\0.modinfo\0";
        let info = b"name=x\0depends=a,b\0";
        let interp = b"/lib/ld-linux-armhf.so.3\0";
        let (s_off, i_off, p_off) = (
            e.len(),
            e.len() + strtab.len(),
            e.len() + strtab.len() + info.len(),
        );
        e.extend_from_slice(strtab);
        e.extend_from_slice(info);
        e.extend_from_slice(interp);
        let ph = e.len();
        e.extend(vec![0u8; 32]);
        put32(&mut e, ph, 3);
        put32(&mut e, ph + 4, p_off);
        put32(&mut e, ph + 0x10, interp.len());
        let sh = e.len();
        e.extend(vec![0u8; 40 * 3]);
        for (i, (name, off, size)) in [(0, 0, 0), (1, s_off, strtab.len()), (11, i_off, info.len())]
            .into_iter()
            .enumerate()
        {
            put32(&mut e, sh + 40 * i, name);
            put32(&mut e, sh + 40 * i + 0x10, off);
            put32(&mut e, sh + 40 * i + 0x14, size);
        }
        put32(&mut e, 0x1C, ph);
        put32(&mut e, 0x20, sh);
        put16(&mut e, 0x2A, 32);
        put16(&mut e, 0x2C, 1);
        put16(&mut e, 0x2E, 40);
        put16(&mut e, 0x30, 3);
        put16(&mut e, 0x32, 1);
        e
    }

    #[test]
    fn an_elf32_object_read_by_hand() {
        let b = elf32();
        let e = Elf::parse(&b).unwrap();
        assert!(!e.is_64());
        assert_eq!(e.machine(), Some(40));
        assert_eq!(e.section(".modinfo"), Some(&b"name=x\0depends=a,b\0"[..]));
        assert_eq!(e.section(".text"), None);
        assert_eq!(e.interpreter().as_deref(), Some("/lib/ld-linux-armhf.so.3"));
        assert!(Elf::parse(b"#!/bin/sh\n").is_none());
    }

    #[test]
    fn a_binary_cut_short_is_not_a_whole_executable() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(whole(&exe));
        for cut in [64, 4096] {
            assert!(!whole(&exe[..cut]), "{cut} bytes");
        }
        assert!(!whole(b"\x7fELF\x02\x01"));
    }
}
