//! A read-only walk of a bbolt database file (etcd's backend) to where one value lies, so that
//! a value can be rewritten in place with bytes of the same length.
//!
//! Only what the walk needs: the two meta pages (the valid one with the higher transaction ID
//! is the current one), branch and leaf pages, and buckets, stored in their own pages or inline
//! in their parent's leaf value. Pages are read one at a time at their offsets, never the whole
//! file. Every offset and length read from the file is checked against the file's bounds, so a
//! damaged file is an error, never a panic or a write somewhere else.
//!
//! Layout (little-endian): a page starts with `id u64, flags u16, count u16, overflow u32`, and
//! spans `1 + overflow` pages; a meta page holds, after that header, `magic u32 (0xED0CDAED),
//! version u32 (2), page size u32, flags u32, root bucket (root page u64, sequence u64), freelist
//! page u64, high-water page u64, txid u64, checksum u64` (FNV-1a 64 of the bytes before it).
//! Branch elements are `pos u32, key size u32, page u64`; leaf elements `flags u32, pos u32, key
//! size u32, value size u32`, `pos` counted from the element itself, the value right after the
//! key. A bucket's value is `root page u64, sequence u64`, then, when the root page is 0, the
//! bucket's only page, inline.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;

const PAGE_HEADER: u64 = 16;
const ELEMENT: u64 = 16;
const BUCKET_HEADER: u64 = 16;
const MAGIC: u32 = 0xED0C_DAED;
const VERSION: u32 = 2;
/// Bytes of a meta before its checksum.
const META_CHECKED: usize = 56;

const BRANCH_PAGE: u16 = 0x01;
const LEAF_PAGE: u16 = 0x02;
const BUCKET_LEAF: u32 = 0x01;
/// The page size bbolt uses when it cannot read one (the common OS page size).
const DEFAULT_PAGE_SIZE: u64 = 4096;

/// Deepest tree walked: bbolt's trees are a few levels deep; more means a loop in a damaged file.
const MAX_DEPTH: usize = 32;

/// Why the file could not be walked.
#[derive(Debug, thiserror::Error)]
pub enum BoltError {
    #[error("cannot read the database: {0}")]
    Io(#[from] io::Error),
    #[error("the file is not a bbolt database: {0}")]
    NotBolt(String),
    #[error("the database is damaged: {0}")]
    Damaged(String),
}

/// A value found in the database: where it starts in the file, and its bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct Located {
    pub offset: u64,
    pub value: Vec<u8>,
}

/// An open database: its page size and the root bucket's page of the current meta.
pub struct Database<'f> {
    file: &'f File,
    /// Bytes of the database (a snapshot's file is longer: its checksum follows).
    len: u64,
    page_size: u64,
    root: u64,
}

/// A bucket: its own pages from a root page, or its one page inline in its parent's leaf
/// value (file offset and length).
#[derive(Clone, Copy, Debug)]
enum Bucket {
    Paged(u64),
    Inline { offset: u64, len: u64 },
}

/// One page as read: its file offset and bytes.
struct Page {
    offset: u64,
    bytes: Vec<u8>,
}

impl Page {
    fn flags(&self) -> u16 {
        u16::from_le_bytes([self.bytes[8], self.bytes[9]])
    }

    fn count(&self) -> u64 {
        u64::from(u16::from_le_bytes([self.bytes[10], self.bytes[11]]))
    }

    fn u32_at(&self, at: u64) -> Result<u32, BoltError> {
        let bytes = self.slice(at, 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn u64_at(&self, at: u64) -> Result<u64, BoltError> {
        let bytes = self.slice(at, 8)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn slice(&self, at: u64, len: u64) -> Result<&[u8], BoltError> {
        let start = usize::try_from(at).ok();
        let end = at.checked_add(len).and_then(|e| usize::try_from(e).ok());
        match (start, end) {
            (Some(s), Some(e)) if e <= self.bytes.len() => Ok(&self.bytes[s..e]),
            _ => Err(BoltError::Damaged(format!(
                "an element of the page at byte {} points past the page",
                self.offset
            ))),
        }
    }

    /// The flags and key of element `i`, and where its value lies in the page and its length
    /// (leaf pages).
    fn leaf(&self, i: u64) -> Result<(u32, &[u8], u64, u64), BoltError> {
        let element = PAGE_HEADER + i * ELEMENT;
        let flags = self.u32_at(element)?;
        let pos = u64::from(self.u32_at(element + 4)?);
        let key_size = u64::from(self.u32_at(element + 8)?);
        let value_size = u64::from(self.u32_at(element + 12)?);
        let key = self.slice(element + pos, key_size)?;
        let value_at = element + pos + key_size;
        self.slice(value_at, value_size)?;
        Ok((flags, key, value_at, value_size))
    }

    /// The key of element `i` and the page it leads to (branch pages).
    fn branch(&self, i: u64) -> Result<(&[u8], u64), BoltError> {
        let element = PAGE_HEADER + i * ELEMENT;
        let pos = u64::from(self.u32_at(element)?);
        let key_size = u64::from(self.u32_at(element + 4)?);
        let child = self.u64_at(element + 8)?;
        Ok((self.slice(element + pos, key_size)?, child))
    }
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What the walk uses of a meta page.
#[derive(Clone, Copy, Debug)]
struct Meta {
    page_size: u64,
    /// The root bucket's page.
    root: u64,
    txid: u64,
}

/// A meta page's body, if its magic, version and checksum hold.
fn meta(bytes: &[u8]) -> Option<Meta> {
    let field = |at: usize, len: usize| bytes.get(at..at + len);
    let u32_at = |at| field(at, 4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
    let u64_at = |at| field(at, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
    if u32_at(0)? != MAGIC || u32_at(4)? != VERSION {
        return None;
    }
    if fnv1a64(field(0, META_CHECKED)?) != u64_at(META_CHECKED)? {
        return None;
    }
    Some(Meta {
        page_size: u64::from(u32_at(8)?),
        root: u64_at(16)?,
        txid: u64_at(48)?,
    })
}

impl<'f> Database<'f> {
    /// Opens the database in the first `len` bytes of `file`, at its current meta: of the two,
    /// the valid one with the higher transaction ID (a write torn while updating one meta
    /// leaves the other).
    pub fn open(file: &'f File, len: u64) -> Result<Self, BoltError> {
        let read_meta = |page_size: u64| -> Result<Option<Meta>, BoltError> {
            let mut bytes = vec![0u8; META_CHECKED + 8];
            if page_size + PAGE_HEADER + bytes.len() as u64 > len {
                return Ok(None);
            }
            file.read_exact_at(&mut bytes, page_size + PAGE_HEADER)?;
            Ok(meta(&bytes))
        };
        let first = read_meta(0)?;
        // The second meta is one page further: the first's page size, or bbolt's default when
        // the first is unreadable.
        let second = read_meta(first.map_or(DEFAULT_PAGE_SIZE, |m| m.page_size))?;
        let current = match (first, second) {
            (Some(a), Some(b)) if b.txid > a.txid && b.page_size == a.page_size => b,
            (Some(a), _) => a,
            (None, Some(b)) => b,
            (None, None) => {
                return Err(BoltError::NotBolt(
                    "neither of its first two pages is a valid bbolt meta page".to_owned(),
                ));
            }
        };
        if !(512..=(1 << 20)).contains(&current.page_size) {
            return Err(BoltError::NotBolt(format!(
                "a page size of {} bytes",
                current.page_size
            )));
        }
        Ok(Database {
            file,
            len,
            page_size: current.page_size,
            root: current.root,
        })
    }

    fn page(&self, id: u64) -> Result<Page, BoltError> {
        let offset = id
            .checked_mul(self.page_size)
            .filter(|o| o.saturating_add(self.page_size) <= self.len)
            .ok_or_else(|| BoltError::Damaged(format!("page {id} lies past the database's end")))?;
        let mut header = [0u8; PAGE_HEADER as usize];
        self.file.read_exact_at(&mut header, offset)?;
        if u64::from_le_bytes(header[..8].try_into().unwrap_or_default()) != id {
            return Err(BoltError::Damaged(format!(
                "page {id} does not carry its own ID"
            )));
        }
        let overflow = u64::from(u32::from_le_bytes(
            header[12..16].try_into().unwrap_or_default(),
        ));
        let span = (1 + overflow)
            .checked_mul(self.page_size)
            .filter(|s| offset.saturating_add(*s) <= self.len)
            .ok_or_else(|| BoltError::Damaged(format!("page {id} runs past the database's end")))?;
        let mut bytes = vec![0u8; usize::try_from(span).unwrap_or(0)];
        self.file.read_exact_at(&mut bytes, offset)?;
        Ok(Page { offset, bytes })
    }

    /// A bucket's inline page, at `offset` in the file, `len` bytes.
    fn inline_page(&self, offset: u64, len: u64) -> Result<Page, BoltError> {
        if offset.saturating_add(len) > self.len || len < PAGE_HEADER {
            return Err(BoltError::Damaged(format!(
                "an inline bucket at byte {offset} runs past the database's end"
            )));
        }
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(0)];
        self.file.read_exact_at(&mut bytes, offset)?;
        Ok(Page { offset, bytes })
    }

    /// The value of `key` in the bucket named by `path` (from the root bucket), if both exist
    /// and it is a plain value, not a bucket.
    pub fn find(&self, path: &[&[u8]], key: &[u8]) -> Result<Option<Located>, BoltError> {
        let mut bucket = Bucket::Paged(self.root);
        for name in path {
            let Some((flags, at, value)) = self.lookup(bucket, name)? else {
                return Ok(None);
            };
            if flags & BUCKET_LEAF == 0 {
                return Ok(None);
            }
            let len = value.len() as u64;
            if len < BUCKET_HEADER {
                return Err(BoltError::Damaged(format!(
                    "bucket {} has a header of {len} bytes",
                    String::from_utf8_lossy(name)
                )));
            }
            let root = u64::from_le_bytes(value[..8].try_into().unwrap_or_default());
            bucket = match root {
                0 => Bucket::Inline {
                    offset: at + BUCKET_HEADER,
                    len: len - BUCKET_HEADER,
                },
                root => Bucket::Paged(root),
            };
        }
        Ok(self
            .lookup(bucket, key)?
            .filter(|(flags, _, _)| flags & BUCKET_LEAF == 0)
            .map(|(_, offset, value)| Located { offset, value }))
    }

    /// The element of `key` in `bucket`: its flags, its value's file offset and its value.
    fn lookup(&self, bucket: Bucket, key: &[u8]) -> Result<Option<(u32, u64, Vec<u8>)>, BoltError> {
        let mut id = match bucket {
            Bucket::Paged(root) => root,
            Bucket::Inline { offset, len } => {
                return leaf_search(&self.inline_page(offset, len)?, key);
            }
        };
        for _ in 0..MAX_DEPTH {
            let page = self.page(id)?;
            match page.flags() {
                LEAF_PAGE => return leaf_search(&page, key),
                BRANCH_PAGE => {
                    // The last element whose key is at most `key` leads to it.
                    let mut next = None;
                    for i in 0..page.count() {
                        let (first, child) = page.branch(i)?;
                        if i > 0 && first > key {
                            break;
                        }
                        next = Some(child);
                    }
                    id = next.ok_or_else(|| {
                        BoltError::Damaged(format!("branch page {id} has no elements"))
                    })?;
                }
                other => {
                    return Err(BoltError::Damaged(format!(
                        "page {id} is of type {other:#x} where a branch or leaf page belongs"
                    )));
                }
            }
        }
        Err(BoltError::Damaged(format!(
            "a tree deeper than {MAX_DEPTH} levels (a loop?)"
        )))
    }
}

/// The element of `key` on a leaf page: its flags, its value's file offset and its value.
fn leaf_search(page: &Page, key: &[u8]) -> Result<Option<(u32, u64, Vec<u8>)>, BoltError> {
    if page.flags() != LEAF_PAGE {
        return Err(BoltError::Damaged(format!(
            "the page at byte {} is of type {:#x} where a leaf page belongs",
            page.offset,
            page.flags()
        )));
    }
    for i in 0..page.count() {
        let (flags, found, value_at, value_size) = page.leaf(i)?;
        if found == key {
            let value = page.slice(value_at, value_size)?.to_vec();
            return Ok(Some((flags, page.offset + value_at, value)));
        }
    }
    Ok(None)
}

/// A writer of small bbolt files in the layout above, for tests of the walk and its users.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub(crate) const PAGE_SIZE: u64 = 4096;

    /// A leaf element: (flags, key, value).
    pub(crate) type LeafEntry<'a> = (u32, &'a [u8], &'a [u8]);

    /// Pages 0 and 1 are the metas, 2 the (empty) freelist; the ones added follow.
    #[derive(Clone)]
    pub(crate) struct DbBuilder {
        pages: Vec<Vec<u8>>,
    }

    fn header(id: u64, flags: u16, count: usize, overflow: u32) -> Vec<u8> {
        let mut page = id.to_le_bytes().to_vec();
        page.extend(flags.to_le_bytes());
        page.extend(u16::try_from(count).expect("count").to_le_bytes());
        page.extend(overflow.to_le_bytes());
        page
    }

    /// A leaf page's bytes (not padded).
    pub(crate) fn leaf_page(id: u64, entries: &[LeafEntry]) -> Vec<u8> {
        let mut page = header(id, LEAF_PAGE, entries.len(), 0);
        let mut data = Vec::new();
        let data_start = PAGE_HEADER as usize + entries.len() * ELEMENT as usize;
        for (i, (flags, key, value)) in entries.iter().enumerate() {
            let element = PAGE_HEADER as usize + i * ELEMENT as usize;
            let pos = data_start + data.len() - element;
            page.extend(flags.to_le_bytes());
            page.extend(u32::try_from(pos).expect("pos").to_le_bytes());
            page.extend(u32::try_from(key.len()).expect("key").to_le_bytes());
            page.extend(u32::try_from(value.len()).expect("value").to_le_bytes());
            data.extend_from_slice(key);
            data.extend_from_slice(value);
        }
        page.extend(data);
        page
    }

    /// A bucket's value holding its one page inline.
    pub(crate) fn inline_bucket(entries: &[LeafEntry]) -> Vec<u8> {
        let mut value = vec![0u8; BUCKET_HEADER as usize];
        value.extend(leaf_page(0, entries));
        value
    }

    /// A bucket's value whose tree starts at page `root`.
    pub(crate) fn paged_bucket(root: u64) -> Vec<u8> {
        let mut value = root.to_le_bytes().to_vec();
        value.extend(0u64.to_le_bytes());
        value
    }

    impl DbBuilder {
        pub(crate) fn new() -> Self {
            DbBuilder {
                pages: vec![Vec::new(), Vec::new(), header(2, 0x10, 0, 0)],
            }
        }

        fn add(&mut self, mut page: Vec<u8>) -> u64 {
            let id = self.pages.len() as u64;
            page[..8].copy_from_slice(&id.to_le_bytes());
            let span = page.len().div_ceil(PAGE_SIZE as usize).max(1);
            page[12..16].copy_from_slice(&u32::try_from(span - 1).expect("span").to_le_bytes());
            page.resize(span * PAGE_SIZE as usize, 0);
            self.pages.push(page);
            for _ in 1..span {
                self.pages.push(Vec::new());
            }
            id
        }

        pub(crate) fn leaf(&mut self, entries: &[LeafEntry]) -> u64 {
            self.add(leaf_page(0, entries))
        }

        pub(crate) fn branch(&mut self, children: &[(&[u8], u64)]) -> u64 {
            let mut page = header(0, BRANCH_PAGE, children.len(), 0);
            let mut data = Vec::new();
            let data_start = PAGE_HEADER as usize + children.len() * ELEMENT as usize;
            for (i, (key, child)) in children.iter().enumerate() {
                let element = PAGE_HEADER as usize + i * ELEMENT as usize;
                let pos = data_start + data.len() - element;
                page.extend(u32::try_from(pos).expect("pos").to_le_bytes());
                page.extend(u32::try_from(key.len()).expect("key").to_le_bytes());
                page.extend(child.to_le_bytes());
                data.extend_from_slice(key);
            }
            page.extend(data);
            self.add(page)
        }

        /// The file: meta 0 and meta 1 name a root bucket page and a txid each (`None`: a
        /// meta whose checksum does not hold).
        pub(crate) fn finish(mut self, metas: [Option<(u64, u64)>; 2]) -> Vec<u8> {
            let high_water = self.pages.len() as u64;
            for (id, meta) in metas.iter().enumerate() {
                let (root, txid) = meta.unwrap_or((3, 99));
                let mut body = MAGIC.to_le_bytes().to_vec();
                body.extend(VERSION.to_le_bytes());
                body.extend(u32::try_from(PAGE_SIZE).expect("size").to_le_bytes());
                body.extend(0u32.to_le_bytes());
                body.extend(root.to_le_bytes());
                body.extend(0u64.to_le_bytes());
                body.extend(2u64.to_le_bytes());
                body.extend(high_water.to_le_bytes());
                body.extend(txid.to_le_bytes());
                let checksum = fnv1a64(&body) ^ u64::from(meta.is_none());
                body.extend(checksum.to_le_bytes());
                let mut page = header(id as u64, 0x04, 0, 0);
                page.extend(body);
                self.pages[id] = page;
            }
            let mut file = Vec::new();
            for mut page in self.pages {
                if page.is_empty() {
                    continue;
                }
                let span = page.len().div_ceil(PAGE_SIZE as usize).max(1);
                page.resize(span * PAGE_SIZE as usize, 0);
                file.extend(page);
            }
            file
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    fn open_bytes(bytes: &[u8]) -> (tempfile::NamedTempFile, u64) {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), bytes).expect("write");
        (file, bytes.len() as u64)
    }

    fn find(bytes: &[u8], path: &[&[u8]], key: &[u8]) -> Result<Option<Vec<u8>>, BoltError> {
        let (file, len) = open_bytes(bytes);
        let handle = File::open(file.path()).expect("open");
        let db = Database::open(&handle, len)?;
        let found = db.find(path, key)?;
        if let Some(found) = &found {
            let at = usize::try_from(found.offset).expect("offset");
            assert_eq!(
                &bytes[at..at + found.value.len()],
                found.value.as_slice(),
                "the offset is where the value lies in the file"
            );
        }
        Ok(found.map(|f| f.value))
    }

    #[test]
    fn a_value_is_found_in_an_inline_bucket_and_through_branch_pages() {
        let mut db = DbBuilder::new();
        let users = inline_bucket(&[(0, b"alice", b"a-record"), (0, b"root", b"r-record")]);
        let left = db.leaf(&[(0, b"a", b"1"), (0, b"k", b"2")]);
        let right = db.leaf(&[(0, b"m", b"3"), (0, b"z", b"4")]);
        let branch = db.branch(&[(b"a", left), (b"m", right)]);
        let paged = paged_bucket(branch);
        let root = db.leaf(&[
            (BUCKET_LEAF, b"authUsers", &users),
            (BUCKET_LEAF, b"key", &paged),
            (0, b"plain", b"v"),
        ]);
        let bytes = db.finish([Some((root, 4)), Some((root, 3))]);

        let found = |path: &[&[u8]], key: &[u8]| find(&bytes, path, key).expect("walks");
        assert_eq!(found(&[b"authUsers"], b"root"), Some(b"r-record".to_vec()));
        assert_eq!(found(&[b"authUsers"], b"alice"), Some(b"a-record".to_vec()));
        assert_eq!(found(&[b"key"], b"k"), Some(b"2".to_vec()));
        assert_eq!(found(&[b"key"], b"z"), Some(b"4".to_vec()));
        assert_eq!(found(&[b"key"], b"n"), None);
        assert_eq!(found(&[b"authUsers"], b"bob"), None);
        assert_eq!(found(&[b"missing"], b"root"), None);
        assert_eq!(
            found(&[b"plain"], b"root"),
            None,
            "a plain value is no bucket"
        );
        assert_eq!(found(&[], b"key"), None, "a bucket is no plain value");
    }

    #[test]
    fn the_valid_meta_with_the_higher_transaction_is_the_current_one() {
        let mut db = DbBuilder::new();
        let old = db.leaf(&[(0, b"k", b"old")]);
        let new = db.leaf(&[(0, b"k", b"new")]);
        let newer_second = db.clone().finish([Some((old, 7)), Some((new, 8))]);
        assert_eq!(
            find(&newer_second, &[], b"k").expect("walks"),
            Some(b"new".to_vec())
        );
        let newer_first = db.clone().finish([Some((new, 9)), Some((old, 8))]);
        assert_eq!(
            find(&newer_first, &[], b"k").expect("walks"),
            Some(b"new".to_vec())
        );
        let torn_first = db.clone().finish([None, Some((new, 1))]);
        assert_eq!(
            find(&torn_first, &[], b"k").expect("walks"),
            Some(b"new".to_vec()),
            "the second meta serves when the first is torn"
        );
        let torn_second = db.finish([Some((old, 7)), None]);
        assert_eq!(
            find(&torn_second, &[], b"k").expect("walks"),
            Some(b"old".to_vec()),
            "a meta whose checksum fails is not used, whatever its txid"
        );
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        assert!(matches!(
            find(&[0u8; 8192], &[], b"k"),
            Err(BoltError::NotBolt(_))
        ));
        let mut db = DbBuilder::new();
        let root = db.leaf(&[(BUCKET_LEAF, b"authUsers", &paged_bucket(4242))]);
        let bytes = db.finish([Some((root, 1)), Some((root, 1))]);
        assert!(matches!(
            find(&bytes, &[b"authUsers"], b"root"),
            Err(BoltError::Damaged(_))
        ));
        // An element whose key runs past its page.
        let mut db = DbBuilder::new();
        let root = db.leaf(&[(0, b"k", b"v")]);
        let mut bytes = db.finish([Some((root, 1)), Some((root, 1))]);
        let size_at = usize::try_from(root * PAGE_SIZE).expect("offset") + 16 + 8;
        bytes[size_at..size_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            find(&bytes, &[], b"k"),
            Err(BoltError::Damaged(_))
        ));
        // A branch that leads to itself.
        let mut db = DbBuilder::new();
        let branch = db.branch(&[(b"a", 3)]);
        assert_eq!(branch, 3);
        let bytes = db.finish([Some((branch, 1)), Some((branch, 1))]);
        assert!(matches!(
            find(&bytes, &[], b"k"),
            Err(BoltError::Damaged(_))
        ));
    }
}
