//! Reading a model's `tokenizer.json` in a few milliseconds. tokenizers'
//! own reader passes the model through two generic representations on its
//! way (an untagged enum, then a flattened JSON value) and took ~45 ms for
//! MiniLM's 30,522 WordPiece tokens: a third of a one-shot search on tokio.
//! A WordPiece file is read here with every part handed straight to
//! tokenizers' own deserializer for that part, then assembled as its reader
//! assembles it; any other model goes through tokenizers' reader.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde::Deserialize;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, Tokenizer};

/// The tokenizer of the model whose files are in `model_dir`.
pub(super) fn tokenizer_in(model_dir: &Path) -> Result<Tokenizer> {
    TokenizerFile::read_in(model_dir)?.tokenizer()
}

/// A `tokenizer.json` read once, for the tokenizer it describes and for
/// its bytes (`StaticModel::load` checks their hash against its table's).
pub(super) struct TokenizerFile {
    pub(super) path: PathBuf,
    pub(super) bytes: Vec<u8>,
}

impl TokenizerFile {
    /// The tokenizer file of the model whose files are in `model_dir`.
    pub(super) fn read_in(model_dir: &Path) -> Result<TokenizerFile> {
        TokenizerFile::read(&model_dir.join("tokenizer.json"))
    }

    fn read(path: &Path) -> Result<TokenizerFile> {
        let bytes = std::fs::read(path).map_err(|e| anyhow!("cannot read tokenizer {}: {e}", path.display()))?;
        Ok(TokenizerFile { path: path.to_path_buf(), bytes })
    }

    /// The tokenizer the file describes, without padding or truncation
    /// (callers do both themselves).
    pub(super) fn tokenizer(&self) -> Result<Tokenizer> {
        let path = self.path.display();
        // What cannot be read is a damaged file, to install again (review 185).
        let fix = || super::assets::fix_for(&self.path);
        let mut tokenizer = match serde_json::from_slice::<WordPieceFile>(&self.bytes) {
            Ok(file) => file.assemble().map_err(|e| anyhow!("tokenizer {path}: {e}; {}", fix()))?,
            Err(_) => Tokenizer::from_bytes(&self.bytes)
                .map_err(|e| anyhow!("cannot read tokenizer {path}: {e}; {}", fix()))?,
        };
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| anyhow!("tokenizer: {e}"))?;
        Ok(tokenizer)
    }
}

/// A `tokenizer.json` whose model is WordPiece. Deserializing `WordPiece`
/// by its own type fails on any other model, which then takes the general
/// path. Padding and truncation are not read: `tokenizer` turns both off.
#[derive(Deserialize)]
struct WordPieceFile {
    version: String,
    #[serde(default)]
    added_tokens: Vec<AddedTokenEntry>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
    model: WordPiece,
}

#[derive(Deserialize)]
struct AddedTokenEntry {
    #[serde(flatten)]
    token: AddedToken,
}

impl WordPieceFile {
    /// The parts put together in the order tokenizers' reader uses: the
    /// added tokens last, since adding one may normalize it.
    fn assemble(self) -> Result<Tokenizer> {
        if self.version != "1.0" {
            bail!("unknown tokenizer version '{}'", self.version);
        }
        let mut tokenizer = Tokenizer::new(self.model);
        tokenizer.with_normalizer(self.normalizer).map_err(|e| anyhow!("{e}"))?;
        tokenizer.with_pre_tokenizer(self.pre_tokenizer);
        tokenizer.with_post_processor(self.post_processor);
        tokenizer.with_decoder(self.decoder);
        tokenizer.add_tokens(self.added_tokens.into_iter().map(|t| t.token)).map_err(|e| anyhow!("{e}"))?;
        Ok(tokenizer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_tokenizer(path: &Path) -> Result<Tokenizer> {
        TokenizerFile::read(path)?.tokenizer()
    }

    fn installed() -> std::path::PathBuf {
        crate::embed::locate_model(crate::project::DEFAULT_EMBEDDER_MODEL)
            .expect("the test command fetches the model")
            .join("tokenizer.json")
    }

    fn by_tokenizers_reader(path: &Path) -> Tokenizer {
        let mut tokenizer = Tokenizer::from_file(path).unwrap();
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).unwrap();
        tokenizer
    }

    /// Texts that reach every part: accents and case (the normalizer), CJK
    /// characters and punctuation (the pre-tokenizer), a word past the
    /// 100-character limit and unknown characters (the model), special
    /// tokens written in the text (the added tokens), control characters.
    const TEXTS: &[&str] = &[
        "fn retry_failed_uploads(&mut self) -> Result<(), UploadError> {",
        "Ünïcödé ÀCCENTS and MixedCase identifiers: HTTPServerError, parse_URL2",
        "中文字符 mixed with 日本語 and 한국어 text",
        "tabs\tand\r\nnewlines\u{0}\u{7}control \u{200b}zero-width",
        "[CLS] a literal [SEP] in code, [MASK]ed and [UNK] and [PAD]",
        "emoji 🦀🐍 and math ∑∫ √2 ≠ 1",
        "",
        "   ",
    ];

    #[test]
    fn a_wordpiece_file_reads_as_tokenizers_reads_it() {
        let path = installed();
        let (fast, reference) = (read_tokenizer(&path).unwrap(), by_tokenizers_reader(&path));
        assert_eq!(fast.get_vocab(true), reference.get_vocab(true));
        let long_word = "x".repeat(150);
        let sources = [include_str!("tokenizer.rs"), include_str!("static_model.rs"), include_str!("../../Cargo.toml")];
        let texts = TEXTS.iter().copied().chain([long_word.as_str()]).chain(sources);
        for text in texts {
            for special in [false, true] {
                let (a, b) = (fast.encode_fast(text, special).unwrap(), reference.encode_fast(text, special).unwrap());
                assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
                assert_eq!(a.get_offsets(), b.get_offsets(), "{text:?}");
                assert_eq!(a.get_type_ids(), b.get_type_ids(), "{text:?}");
            }
        }
        let ids = fast.encode_fast("Decoding keeps the words", false).unwrap().get_ids().to_vec();
        assert_eq!(fast.decode(&ids, true).unwrap(), reference.decode(&ids, true).unwrap());
    }

    #[test]
    fn another_model_takes_tokenizers_reader_and_a_broken_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let bpe = dir.path().join("bpe.json");
        let file = r#"{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,
            "post_processor":null,"decoder":null,
            "model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}"#;
        std::fs::write(&bpe, file).unwrap();
        assert_eq!(read_tokenizer(&bpe).unwrap().encode_fast("ab", false).unwrap().get_ids(), [2]);
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, r#"{"version":"1.0","model":{"type":"WordPiece","#).unwrap();
        let e = read_tokenizer(&broken).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot read tokenizer {}", broken.display())), "{e}");
        let e = read_tokenizer(&dir.path().join("missing.json")).unwrap_err().to_string();
        assert!(e.contains("missing.json") && e.contains("No such file"), "{e}");
    }
}
