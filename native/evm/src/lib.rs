//! revm behind a napi-rs addon: executes Monsoon transactions over state that the JS side
//! supplies (the DSM-Tree's top layer and the transaction's bag), one transaction per call.
//!
//! Witness protocol (a re-run loop, see `native/evm/README.md`): the engine keeps what JS has
//! handed it (accounts, slots, code: the committed state of the block so far). A transaction
//! that reads something the engine lacks runs on with a default (no account, zero, no code)
//! and its result is thrown away; the call answers with every key it lacked, JS resolves them
//! from its tree and calls again. A key JS could not resolve (a node missing from the bag) is
//! fed back as unresolvable: a run that reaches it with nothing else lacking before it stops
//! there and names it, so the transaction aborts on the same key the reference engine would.
//!
//! Binary formats are little-endian for integers and big-endian for 256-bit words.

#![deny(clippy::all)]

use napi::{Error, Result, Status};
use napi_derive::napi;
use revm::bytecode::Bytecode;
use revm::context::result::{EVMError, ExecutionResult, Output, ResultAndState};
use revm::context::{BlockEnv, CfgEnv, Context, ContextTr, Evm, Journal, TxEnv};
use revm::context_interface::transaction::{AccessList, AccessListItem};
use revm::database_interface::{DBErrorMarker, Database};
use revm::handler::instructions::EthInstructions;
use revm::handler::{EthFrame, EthPrecompiles, PrecompileProvider};
use revm::context_interface::context::ContextError;
use revm::bytecode::opcode::{
    BALANCE, CALL, CALLCODE, DELEGATECALL, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, SELFDESTRUCT, SSTORE, STATICCALL,
};
use revm::interpreter::instructions::utility::IntoAddress;
use revm::interpreter::instructions::{contract, gas_table_spec, host};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{InputsTr, RuntimeFlag};
use revm::interpreter::{
    CallInputs, Instruction, InstructionContext, InstructionExecResult, InstructionResult, InterpreterResult,
};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{
    Address, AddressSet, Bytes, HashMap, HashSet, StorageKey, StorageValue, TxKind, B256,
    KECCAK_EMPTY, U256,
};
use revm::primitives::alloy_primitives::Bloom;
use revm::state::{AccountInfo, EvmState};
use revm::{ExecuteEvm, MainBuilder, MainContext};
use std::fmt;

mod batch_verify;
mod recover;

/// A key of the state a transaction may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Account(Address),
    Slot(Address, U256),
    /// Code by hash, with the address it was asked for (JS resolves code by account).
    Code(B256, Address),
}

/// A key as the unresolvable set holds it: code by its hash alone (whichever account asked).
fn unresolvable_form(key: Key) -> Key {
    match key {
        Key::Code(h, _) => Key::Code(h, Address::ZERO),
        k => k,
    }
}

/// Execution reached a key that JS could not resolve, with nothing unresolved before it.
#[derive(Debug)]
struct Unresolvable(Key);

impl fmt::Display for Unresolvable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unresolvable {:?}", self.0)
    }
}
impl std::error::Error for Unresolvable {}
impl DBErrorMarker for Unresolvable {}

/// The committed state JS has supplied, and what the current run lacked.
#[derive(Default)]
struct WitnessDb {
    /// None: known not to exist.
    accounts: HashMap<Address, Option<AccountInfo>>,
    storage: HashMap<Address, HashMap<U256, U256>>,
    /// Accounts whose storage is known to be empty apart from `storage` (deleted or created).
    cleared: HashSet<Address>,
    code: HashMap<B256, Bytecode>,
    /// Who has code of a hash, for asking JS for the code by account.
    code_owner: HashMap<B256, Address>,
    unresolvable: HashSet<Key>,
    /// What the current run lacked, in the order it asked.
    lacking: Vec<Key>,
    lacking_set: HashSet<Key>,
    /// While a run ahead is recorded (see `Engine::look_ahead`): every account and slot it read
    /// from here, with the value it read.
    log: Option<Vec<Read>>,
    /// The run aimed an opcode at the block's coinbase (BALANCE, EXTCODE*, a CALL, SELFDESTRUCT):
    /// it may have seen the coinbase's balance, which every transaction's fee changes.
    eyed_coinbase: bool,
    /// What a run reads for a slot it lacks (see `LACKING_SLOT_GUESS`).
    lacking_slot: U256,
}

/// What a run that lacks a slot reads in its place where reads are not reported (a miner's
/// engine; the run is thrown away either way). Not zero: the first slot most contract calls
/// read is a balance or an allowance checked against an amount, and a zero there ends the run
/// in a revert before it reaches the next slot it needs (an ERC-20 transfer's recipient
/// balance), which then costs a round of its own. 2^128 passes such checks, so one run names
/// both, and a sum with it does not overflow. A guess can only make JS read a key the real run
/// never reads, which a miner's block witness tolerates; a client records every key it reads
/// as the transaction's, so where reads are reported the guess stays zero, as before.
const LACKING_SLOT_GUESS: U256 = U256::from_limbs([0, 0, 1, 0]);

/// The committed state of a new engine: `report_reads` as in its config.
fn witness_db(report_reads: bool) -> WitnessDb {
    WitnessDb { lacking_slot: if report_reads { U256::ZERO } else { LACKING_SLOT_GUESS }, ..Default::default() }
}

/// An account's fields as a run read them (None: no account).
type AccountRead = Option<(u64, U256, B256)>;

/// A value a run read from the committed state.
#[derive(Clone, Copy)]
enum Read {
    Account(Address, AccountRead),
    Slot(Address, U256, U256),
}

impl WitnessDb {
    fn lack(&mut self, key: Key) -> std::result::Result<(), Unresolvable> {
        if self.unresolvable.contains(&unresolvable_form(key)) {
            // Only a real stop when nothing earlier in the run was a guess.
            if self.lacking.is_empty() {
                return Err(Unresolvable(key));
            }
            return Ok(());
        }
        if self.lacking_set.insert(key) {
            self.lacking.push(key);
        }
        Ok(())
    }

    fn forget(&mut self, address: &Address) {
        if let Some(Some(info)) = self.accounts.remove(address) {
            if self.code_owner.get(&info.code_hash) == Some(address) {
                self.code_owner.remove(&info.code_hash);
            }
        }
        self.storage.remove(address);
        self.cleared.remove(address);
    }

    /// The account as held now: None when lacking, Some(None) when known not to exist.
    fn peek_account(&self, address: &Address) -> Option<AccountRead> {
        self.accounts.get(address).map(|a| a.as_ref().map(|i| (i.nonce, i.balance, i.code_hash)))
    }

    /// The slot as held now: None when lacking.
    fn peek_slot(&self, address: &Address, index: &U256) -> Option<U256> {
        if let Some(v) = self.storage.get(address).and_then(|m| m.get(index)) {
            return Some(*v);
        }
        if self.cleared.contains(address) || matches!(self.accounts.get(address), Some(None)) {
            return Some(U256::ZERO);
        }
        None
    }

    /// Everything goes, code too: JS reads it all again (and records the reads).
    fn reset(&mut self) {
        self.accounts.clear();
        self.storage.clear();
        self.cleared.clear();
        self.code.clear();
        self.code_owner.clear();
    }
}

impl Database for WitnessDb {
    type Error = Unresolvable;

    fn basic(&mut self, address: Address) -> std::result::Result<Option<AccountInfo>, Unresolvable> {
        if let Some(a) = self.accounts.get(&address) {
            if let Some(log) = &mut self.log {
                log.push(Read::Account(address, a.as_ref().map(|i| (i.nonce, i.balance, i.code_hash))));
            }
            return Ok(a.clone());
        }
        self.lack(Key::Account(address))?;
        Ok(None)
    }

    fn code_by_hash(&mut self, code_hash: B256) -> std::result::Result<Bytecode, Unresolvable> {
        if code_hash == KECCAK_EMPTY || code_hash == B256::ZERO {
            return Ok(Bytecode::default());
        }
        if let Some(c) = self.code.get(&code_hash) {
            return Ok(c.clone());
        }
        let owner = self.code_owner.get(&code_hash).copied().unwrap_or_default();
        self.lack(Key::Code(code_hash, owner))?;
        Ok(Bytecode::default())
    }

    fn storage(&mut self, address: Address, index: StorageKey) -> std::result::Result<StorageValue, Unresolvable> {
        if let Some(v) = self.peek_slot(&address, &index) {
            if let Some(log) = &mut self.log {
                log.push(Read::Slot(address, index, v));
            }
            return Ok(v);
        }
        self.lack(Key::Slot(address, index))?;
        Ok(self.lacking_slot)
    }

    fn block_hash(&mut self, _number: u64) -> std::result::Result<B256, Unresolvable> {
        // As @ethereumjs/evm without a blockchain: Monsoon keeps no block hashes in the EVM.
        Ok(B256::ZERO)
    }
}

/// The KZG point-evaluation precompile (0x0a) has no KZG setup behind it in the reference
/// engine: a call to it fails the transaction there, so it does here.
#[derive(Clone)]
struct MonsoonPrecompiles {
    inner: EthPrecompiles,
}

const KZG: Address = Address::new([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a]);

impl<CTX: ContextTr> PrecompileProvider<CTX> for MonsoonPrecompiles {
    type Output = InterpreterResult;

    fn set_spec(&mut self, spec: <CTX::Cfg as revm::context::Cfg>::Spec) -> bool {
        <EthPrecompiles as PrecompileProvider<CTX>>::set_spec(&mut self.inner, spec)
    }

    fn run(&mut self, context: &mut CTX, inputs: &CallInputs) -> std::result::Result<Option<InterpreterResult>, String> {
        if inputs.bytecode_address == KZG && self.inner.contains(&KZG) {
            return Err("kzg not initialized".to_string());
        }
        <EthPrecompiles as PrecompileProvider<CTX>>::run(&mut self.inner, context, inputs)
    }

    fn warm_addresses(&self) -> &AddressSet {
        self.inner.warm_addresses()
    }

    fn contains(&self, address: &Address) -> bool {
        self.inner.contains(address)
    }
}

type Ctx = Context<BlockEnv, TxEnv, CfgEnv, WitnessDb, Journal<WitnessDb>, ()>;
type Vm = Evm<Ctx, (), EthInstructions<EthInterpreter, Ctx>, MonsoonPrecompiles, EthFrame<EthInterpreter>>;

// ------------------------------------------------------------------ reads as the reference makes them
//
// A transaction needs from the witness exactly the keys @ethereumjs/evm reads, or a block one
// engine builds is refused by a miner re-executing it with the other (and a transaction aborts
// MISSING_NODE in one engine and runs in the other). revm skips loading a cold slot or account
// when the gas left cannot pay for it (and SSTORE checks the EIP-2200 stipend first), while
// @ethereumjs/evm reads before it charges: SSTORE reads the slot; CALL with value, and from Prague
// (EIP-7702) every call, reads the target's account and code; SELFDESTRUCT with a balance reads
// the beneficiary. These opcodes read those keys first (without warming them), then run as revm's.

type Ictx<'a> = InstructionContext<'a, Ctx, EthInterpreter>;

/// Makes sure the engine holds `key` (committed state, or this transaction's), as the reference
/// would read it: a lacking key is asked for, an unresolvable one stops the run.
fn read_first(host: &mut Ctx, key: Key) -> InstructionExecResult {
    let journal = &mut host.journaled_state;
    let read = match key {
        Key::Account(a) => {
            if journal.inner.state.contains_key(&a) {
                return Ok(());
            }
            journal.database.basic(a).map(|_| ())
        }
        Key::Slot(a, slot) => {
            if let Some(acc) = journal.inner.state.get(&a) {
                if acc.is_created() || acc.storage.contains_key(&slot) {
                    return Ok(());
                }
            }
            journal.database.storage(a, slot).map(|_| ())
        }
        // Code by account: its hash from this transaction's state or the committed one.
        Key::Code(_, a) => {
            let info = match journal.inner.state.get(&a) {
                Some(acc) if acc.info.code.is_some() => return Ok(()),
                Some(acc) => Some(acc.info.clone()),
                None => match journal.database.basic(a) {
                    Ok(info) => info,
                    Err(e) => return fail(host, e),
                },
            };
            match info {
                Some(i) if i.code_hash != KECCAK_EMPTY => journal.database.code_by_hash(i.code_hash).map(|_| ()),
                _ => Ok(()),
            }
        }
    };
    match read {
        Ok(()) => Ok(()),
        Err(e) => fail(host, e),
    }
}

/// Notes an opcode aimed at `target`: when that is the coinbase, the run may have seen its balance.
fn eye(host: &mut Ctx, target: Address) {
    if target == host.block.beneficiary {
        host.journaled_state.database.eyed_coinbase = true;
    }
}

/// BALANCE, EXTCODESIZE, EXTCODECOPY or EXTCODEHASH (`KIND`), its target noted (`eye`), then as revm's.
fn account_op_eyeing<const KIND: u8>(ctx: Ictx<'_>) -> InstructionExecResult {
    if let Ok(target) = ctx.interpreter.stack.peek(0) {
        eye(ctx.host, target.into_address());
    }
    match KIND {
        BALANCE => host::balance(ctx),
        EXTCODESIZE => host::extcodesize(ctx),
        EXTCODECOPY => host::extcodecopy(ctx),
        _ => host::extcodehash(ctx),
    }
}

/// Stops the run on an unresolvable key the way revm stops on a database error.
fn fail(host: &mut Ctx, e: Unresolvable) -> InstructionExecResult {
    host.error = Err(ContextError::Db(e));
    Err(InstructionResult::FatalExternalError)
}

fn sstore_reading_first(ctx: Ictx<'_>) -> InstructionExecResult {
    if !ctx.interpreter.runtime_flag.is_static() && ctx.interpreter.stack.peek(1).is_ok() {
        let slot = ctx.interpreter.stack.peek(0)?;
        read_first(ctx.host, Key::Slot(ctx.interpreter.input.target_address(), slot))?;
    }
    host::sstore(ctx)
}

/// CALL, CALLCODE (`has_value`), DELEGATECALL, STATICCALL: the target as the reference reads it.
fn call_target_first(ctx: &mut Ictx<'_>, args: usize, has_value: bool, new_account_check: bool) -> InstructionExecResult {
    if ctx.interpreter.stack.peek(args - 1).is_err() {
        return Ok(()); // revm's own instruction underflows, as the reference does before any read
    }
    let to = ctx.interpreter.stack.peek(1)?.into_address();
    eye(ctx.host, to);
    let value = if has_value { ctx.interpreter.stack.peek(2)? } else { U256::ZERO };
    if has_value && !value.is_zero() && ctx.interpreter.runtime_flag.is_static() && new_account_check {
        return Ok(()); // a value CALL in a static frame fails before anything is read
    }
    if new_account_check && !value.is_zero() {
        read_first(ctx.host, Key::Account(to))?;
    }
    if ctx.interpreter.runtime_flag.spec_id().is_enabled_in(SpecId::PRAGUE) {
        read_first(ctx.host, Key::Account(to))?;
        read_first(ctx.host, Key::Code(B256::ZERO, to))?;
    }
    Ok(())
}

/// CALL, CALLCODE, DELEGATECALL or STATICCALL (`KIND`), its target read first.
fn call_reading_first<const KIND: u8>(mut ctx: Ictx<'_>) -> InstructionExecResult {
    let has_value = matches!(KIND, CALL | CALLCODE);
    call_target_first(&mut ctx, if has_value { 7 } else { 6 }, has_value, KIND == CALL)?;
    contract::call::<KIND, _, _>(ctx)
}

fn selfdestruct_reading_first(ctx: Ictx<'_>) -> InstructionExecResult {
    if !ctx.interpreter.runtime_flag.is_static() {
        if let Ok(to) = ctx.interpreter.stack.peek(0) {
            eye(ctx.host, to.into_address());
            let me = ctx.interpreter.input.target_address();
            let has_balance = ctx.host.journaled_state.inner.state.get(&me).is_some_and(|a| !a.info.balance.is_zero());
            if has_balance {
                read_first(ctx.host, Key::Account(to.into_address()))?;
            }
        }
    }
    host::selfdestruct(ctx)
}

/// revm's instruction table for `spec`, with the opcodes above reading as the reference does.
fn instructions(spec: SpecId) -> EthInstructions<EthInterpreter, Ctx> {
    let mut t = EthInstructions::new_mainnet_with_spec(spec);
    let gas = gas_table_spec(spec);
    t.insert_instruction(SSTORE, Instruction::new(sstore_reading_first), gas[SSTORE as usize]);
    t.insert_instruction(CALL, Instruction::new(call_reading_first::<CALL>), gas[CALL as usize]);
    t.insert_instruction(CALLCODE, Instruction::new(call_reading_first::<CALLCODE>), gas[CALLCODE as usize]);
    t.insert_instruction(DELEGATECALL, Instruction::new(call_reading_first::<DELEGATECALL>), gas[DELEGATECALL as usize]);
    t.insert_instruction(STATICCALL, Instruction::new(call_reading_first::<STATICCALL>), gas[STATICCALL as usize]);
    t.insert_instruction(SELFDESTRUCT, Instruction::new(selfdestruct_reading_first), gas[SELFDESTRUCT as usize]);
    t.insert_instruction(BALANCE, Instruction::new(account_op_eyeing::<BALANCE>), gas[BALANCE as usize]);
    t.insert_instruction(EXTCODESIZE, Instruction::new(account_op_eyeing::<EXTCODESIZE>), gas[EXTCODESIZE as usize]);
    t.insert_instruction(EXTCODECOPY, Instruction::new(account_op_eyeing::<EXTCODECOPY>), gas[EXTCODECOPY as usize]);
    t.insert_instruction(EXTCODEHASH, Instruction::new(account_op_eyeing::<EXTCODEHASH>), gas[EXTCODEHASH as usize]);
    t
}

// ------------------------------------------------------------------ byte reading

struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

fn bad(what: &str) -> Error {
    Error::new(Status::InvalidArg, format!("malformed engine input: {what}"))
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, p: 0 }
    }
    fn done(&self) -> bool {
        self.p >= self.b.len()
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.p + n > self.b.len() {
            return Err(bad(&format!("wanted {n} bytes at {}, found {}", self.p, self.b.len() - self.p)));
        }
        let s = &self.b[self.p..self.p + n];
        self.p += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn u128(&mut self) -> Result<u128> {
        Ok(u128::from_le_bytes(self.take(16)?.try_into().unwrap()))
    }
    fn address(&mut self) -> Result<Address> {
        Ok(Address::from_slice(self.take(20)?))
    }
    fn b256(&mut self) -> Result<B256> {
        Ok(B256::from_slice(self.take(32)?))
    }
    fn word(&mut self) -> Result<U256> {
        Ok(U256::from_be_slice(self.take(32)?))
    }
}

/// The keys the last run lacked: count u32, then each key.
fn put_lacking(out: &mut Vec<u8>, db: &WitnessDb) {
    put_keys(out, &db.lacking);
}

fn put_keys(out: &mut Vec<u8>, keys: &[Key]) {
    out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for k in keys {
        put_key(out, k);
    }
}

fn put_key(out: &mut Vec<u8>, k: &Key) {
    match k {
        Key::Account(a) => {
            out.push(1);
            out.extend_from_slice(a.as_slice());
        }
        Key::Slot(a, s) => {
            out.push(2);
            out.extend_from_slice(a.as_slice());
            out.extend_from_slice(&s.to_be_bytes::<32>());
        }
        Key::Code(h, a) => {
            out.push(3);
            out.extend_from_slice(h.as_slice());
            out.extend_from_slice(a.as_slice());
        }
    }
}

fn spec_of(fork: u8) -> Result<SpecId> {
    Ok(match fork {
        0 => SpecId::SHANGHAI,
        1 => SpecId::CANCUN,
        2 => SpecId::PRAGUE,
        3 => SpecId::OSAKA,
        _ => return Err(bad(&format!("fork index 0–3 (shanghai–osaka), found {fork}"))),
    })
}

/// One block's execution engine: revm over the state JS feeds it.
#[napi]
pub struct Engine {
    evm: Vm,
    /// The last executed transaction's state changes, until JS commits or discards them.
    pending: Option<EvmState>,
    /// The last answer, encoded (kept: its allocation is reused, and JS fetches an answer
    /// longer than its buffer with `result`).
    out: Vec<u8>,
    /// What the batch under way changed so far (see `execute_batch`).
    batch: BatchChanges,
    /// How many more runs ahead (see `look_ahead`) the batch under way may make; None before
    /// its first.
    ahead_left: Option<u32>,
    /// Runs ahead of the batch under way that lacked nothing, by transaction index: taken
    /// instead of running the transaction again when nothing they read has changed since.
    trials: HashMap<u32, Trial>,
    /// Transactions whose run ahead was taken (for tests and benchmarks).
    reused: u32,
    /// `execute` answers with what the run read of the state it was handed (see `execute`).
    report_reads: bool,
}

/// A run ahead that lacked nothing: its result, what it read, and the transaction it ran.
struct Trial {
    tx: Vec<u8>,
    rs: ResultAndState,
    reads: Vec<Read>,
    eyed_coinbase: bool,
}

/// How many transactions after one that lacks keys are run ahead to learn what they lack too,
/// so one round of JS reads serves them all (see `look_ahead`).
const LOOK_AHEAD: u32 = 256;
/// Runs ahead a batch may make per transaction it holds: a bound on the work guesses can waste
/// (transactions whose keys depend on the ones before them are guessed wrong again and again).
const AHEAD_PER_TX: u32 = 2;

/// Memory JS owns that an answer is copied into (a Uint8Array). An alias because napi-derive
/// reads a `&mut` argument as a class instance; as a plain type it takes the typed array's memory.
type Out<'a> = &'a mut [u8];

/// Result kinds of `execute`.
const LACKING: u8 = 0;
const EXECUTED: u8 = 1;
const UNRESOLVABLE: u8 = 2;
const REFUSED: u8 = 3;
/// Ends of `execute_batch`'s answer.
const DEFERRED: u8 = 4;
const BATCH_END: u8 = 5;

#[napi]
impl Engine {
    /// `config`: fork u8 (0 shanghai … 3 osaka), chain id u64, block number u64, timestamp u64,
    /// gas limit u64, base fee u64, coinbase (20), and optionally u8 1: report reads (`execute`).
    #[napi(constructor)]
    pub fn new(config: &[u8]) -> Result<Self> {
        let (spec, cfg, block, report_reads) = read_config(config)?;
        let ctx: Ctx = Context::mainnet().with_db(witness_db(report_reads)).with_cfg(cfg).with_block(block);
        let mut evm = ctx.build_mainnet().with_precompiles(MonsoonPrecompiles { inner: EthPrecompiles::new(spec) });
        evm.instruction = instructions(spec);
        Ok(Engine {
            evm,
            pending: None,
            out: Vec::with_capacity(1024),
            batch: BatchChanges::default(),
            ahead_left: None,
            trials: HashMap::default(),
            reused: 0,
            report_reads,
        })
    }

    /// Makes this engine a new one for another block (`config` as for the constructor), all its
    /// state dropped: building one costs tens of microseconds, mostly its preallocated frames.
    #[napi]
    pub fn reset(&mut self, config: &[u8]) -> Result<()> {
        let (spec, cfg, block, report_reads) = read_config(config)?;
        self.report_reads = report_reads;
        self.evm.ctx.modify_cfg(|c| *c = cfg);
        self.evm.ctx.block = block;
        self.evm.instruction = instructions(spec);
        self.evm.precompiles = MonsoonPrecompiles { inner: EthPrecompiles::new(spec) };
        *self.evm.ctx.db_mut() = witness_db(report_reads);
        self.pending = None;
        self.batch = BatchChanges::default();
        self.ahead_left = None;
        self.trials.clear();
        self.reused = 0;
        Ok(())
    }

    /// Transactions of batches whose run ahead was taken instead of a second run, since the
    /// engine was made or reset.
    #[napi]
    pub fn reused(&self) -> u32 {
        self.reused
    }

    /// Applies state records (see `feed_records`).
    #[napi]
    pub fn feed(&mut self, records: &[u8]) -> Result<()> {
        self.feed_records(records)
    }

    /// Runs one transaction (after feeding `records`), see the file's comment for the answer.
    /// The answer is copied into `out` when it fits; its length is returned either way (a
    /// longer one is fetched with `result`). Answers cross as copies into memory JS owns,
    /// never as buffers over Rust memory: no finalizer of ours runs in V8's garbage collector
    /// or at environment teardown.
    /// `tx`: type u8, caller (20), has-to u8, to (20, present when has-to), value (32), gas
    /// limit u64, max fee u128, priority fee u128, nonce u64, chain id u64, data length u32
    /// and data, access-list length u32 and per entry address (20), key count u32, keys (32).
    /// With reads reported (the config's last byte), an EXECUTED answer ends with every account
    /// and slot the run read of what was handed over (count u32, keys as LACKING's): JS hands a
    /// guess over with the first call and records as read only what the run used of it.
    #[napi]
    pub fn execute(&mut self, tx: &[u8], records: &[u8], out: Out<'_>) -> Result<u32> {
        self.answer(out, |engine, answer| engine.run(tx, records, answer))
    }

    /// Runs a batch of transactions in order, from index `from`, each over the state the ones
    /// before it left (after feeding `records`): one call for what would be a call per
    /// transaction and a JS journal flush per transaction. The answer is copied as `execute`'s.
    ///
    /// `batch`: gas left in the block u64, transaction count u32, then per transaction its length
    /// u32 and its encoding (as `execute`'s `tx`).
    ///
    /// Answer: per executed transaction (in order, from `from`) EXECUTED and its outcome (as
    /// `execute`'s, without changes); then one of
    /// - LACKING, the index u32 of the transaction that read keys the engine lacks, key count
    ///   u32 and keys: nothing of that transaction was kept; JS resolves the keys and calls again
    ///   from that index (the batch goes on);
    /// - DEFERRED, the index u32 of a transaction the batch leaves to a call of its own (revm
    ///   refused it, it reached an unresolvable key, it deletes something, or its gas limit is
    ///   above the gas left), nothing of it kept, then the batch's changes;
    /// - BATCH_END, then the batch's changes.
    ///
    /// The batch's changes (count u32, accounts as `execute`'s) are every account any of its
    /// transactions changed, with its state after the last of them, and are already the
    /// committed state later transactions read: JS applies them to its tree once. A flag
    /// CREATED says the account's storage was wiped in the batch (before its slots).
    #[napi]
    pub fn execute_batch(&mut self, batch: &[u8], from: u32, records: &[u8], out: Out<'_>) -> Result<u32> {
        self.answer(out, |engine, answer| engine.run_batch(batch, from, records, answer))
    }

    /// Copies the last answer into `out` (at least as long as `execute` said it is).
    #[napi]
    pub fn result(&self, out: Out<'_>) -> Result<u32> {
        let n = self.out.len();
        if n > out.len() {
            return Err(bad(&format!("a result buffer of {n} bytes, found {}", out.len())));
        }
        out[..n].copy_from_slice(&self.out);
        Ok(n as u32)
    }

    /// Makes the last executed transaction's changes the committed state the next one reads.
    #[napi]
    pub fn commit(&mut self) {
        if let Some(state) = self.pending.take() {
            commit_state(self.evm.ctx.db_mut(), state);
        }
    }

    /// Drops the last executed transaction's changes (JS could not apply them).
    #[napi]
    pub fn discard(&mut self) {
        self.pending = None;
    }
}

impl Engine {
    /// Writes an answer with `work` into the kept buffer and copies it into `out` when it fits;
    /// its length either way.
    fn answer(&mut self, out: Out<'_>, work: impl FnOnce(&mut Self, &mut Vec<u8>) -> Result<()>) -> Result<u32> {
        let mut answer = std::mem::take(&mut self.out);
        answer.clear();
        let r = work(self, &mut answer);
        self.out = answer;
        r?;
        let n = self.out.len();
        if n <= out.len() {
            out[..n].copy_from_slice(&self.out);
        }
        Ok(n as u32)
    }

    /// `execute`'s work, its answer written to `out`.
    fn run(&mut self, tx: &[u8], records: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if !records.is_empty() {
            self.feed_records(records)?;
        }
        self.pending = None;
        self.trials.clear();
        let (env, is_create) = read_tx(tx)?;
        let caller = env.caller;
        let nonce = env.nonce;
        if self.report_reads {
            self.evm.ctx.db_mut().log = Some(Vec::new());
        }
        let outcome = self.transact(env);
        let db = self.evm.ctx.db_mut();
        let reads = db.log.take();
        if !db.lacking.is_empty() {
            out.push(LACKING);
            put_lacking(out, db);
            return Ok(());
        }
        let rs = match outcome {
            Ok(rs) => rs,
            Err(EVMError::Database(Unresolvable(k))) => {
                out.push(UNRESOLVABLE);
                put_key(out, &k);
                return Ok(());
            }
            Err(e) => {
                out.push(REFUSED);
                let msg = match e {
                    EVMError::Custom(s) => s,
                    other => other.to_string(),
                };
                out.extend_from_slice(&(msg.len() as u32).to_le_bytes());
                out.extend_from_slice(msg.as_bytes());
                return Ok(());
            }
        };
        out.push(EXECUTED);
        write_outcome(out, &rs.result, is_create.then(|| caller.create(nonce)));
        write_changes(out, &account_changes(&rs.state, db));
        if let Some(reads) = reads {
            out.extend_from_slice(&(reads.len() as u32).to_le_bytes());
            for read in reads {
                put_key(
                    out,
                    &match read {
                        Read::Account(a, _) => Key::Account(a),
                        Read::Slot(a, slot, _) => Key::Slot(a, slot),
                    },
                );
            }
        }
        self.pending = Some(rs.state);
        Ok(())
    }
}

impl Engine {
    /// `execute_batch`'s work, its answer written to `out`.
    fn run_batch(&mut self, batch: &[u8], from: u32, records: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if !records.is_empty() {
            self.feed_records(records)?;
        }
        self.pending = None;
        let mut r = Reader::new(batch);
        let mut gas_left = r.u64()?;
        let count = r.u32()?;
        for i in 0..count {
            let n = r.u32()? as usize;
            let bytes = r.take(n)?;
            if i < from {
                continue;
            }
            let (env, is_create) = read_tx(bytes)?;
            if env.gas_limit > gas_left {
                self.end_batch(out, Some(i));
                return Ok(());
            }
            let (caller, nonce) = (env.caller, env.nonce);
            let reuse = self.trials.remove(&i).and_then(|t| self.still_holds(t, bytes, &env));
            let outcome = match reuse {
                Some(rs) => {
                    self.reused += 1;
                    let db = self.evm.ctx.db_mut();
                    db.lacking.clear();
                    db.lacking_set.clear();
                    Ok(rs)
                }
                None => self.transact(env),
            };
            let db = self.evm.ctx.db_mut();
            if !db.lacking.is_empty() {
                let mut keys = std::mem::take(&mut db.lacking);
                let left = *self.ahead_left.get_or_insert(count.saturating_mul(AHEAD_PER_TX));
                let ahead = (count - i - 1).min(LOOK_AHEAD).min(left);
                if ahead > 0 {
                    self.ahead_left = Some(left - ahead);
                    self.look_ahead(r, i + 1, ahead, &mut keys)?;
                }
                out.push(LACKING);
                out.extend_from_slice(&i.to_le_bytes());
                put_keys(out, &keys);
                return Ok(());
            }
            let Ok(rs) = outcome else {
                self.end_batch(out, Some(i));
                return Ok(());
            };
            let changes = account_changes(&rs.state, db);
            if changes.iter().any(Change::deletes) {
                self.end_batch(out, Some(i));
                return Ok(());
            }
            self.batch.absorb(&changes);
            drop(changes);
            out.push(EXECUTED);
            write_outcome(out, &rs.result, is_create.then(|| caller.create(nonce)));
            gas_left = gas_left.saturating_sub(rs.result.tx_gas_used());
            commit_state(db, rs.state);
        }
        if !r.done() {
            return Err(bad("trailing bytes after the batch's transactions"));
        }
        self.end_batch(out, None);
        Ok(())
    }

    /// Runs the batch's next `count` transactions (read from `r`) ahead, each over the committed
    /// state as it is (without the changes of the transaction that lacked keys, or of each
    /// other), only to add what they lack to `keys`: nothing of these runs is kept. A guess may
    /// ask for a key the real run will not read, or miss one it will (a key a transaction
    /// before it writes, or makes it read): the first costs JS a read, the second a round, and
    /// neither changes an outcome: every key the engine holds is the committed state.
    ///
    /// A run ahead that lacked nothing is kept (`trials`, by index from `first`) with what it
    /// read: when the batch reaches that transaction and every account and slot it read still
    /// holds the value it read, its result is the one running it again would give (a run is a
    /// function of what it reads), so it is taken instead. The coinbase is the exception every
    /// fee makes: see `still_holds`.
    fn look_ahead(&mut self, mut r: Reader<'_>, first: u32, count: u32, keys: &mut Vec<Key>) -> Result<()> {
        let mut seen: HashSet<Key> = keys.iter().copied().collect();
        for j in 0..count {
            let n = r.u32()? as usize;
            let bytes = r.take(n)?;
            let (env, _) = read_tx(bytes)?;
            let db = self.evm.ctx.db_mut();
            db.log = Some(Vec::new());
            db.eyed_coinbase = false;
            // A refusal or a key JS cannot resolve ends that guess, not the batch.
            let outcome = self.transact(env);
            let db = self.evm.ctx.db_mut();
            let reads = db.log.take().unwrap_or_default();
            if db.lacking.is_empty() {
                if let Ok(rs) = outcome {
                    let trial = Trial { tx: bytes.to_vec(), rs, reads, eyed_coinbase: db.eyed_coinbase };
                    self.trials.insert(first + j, trial);
                }
            }
            for k in db.lacking.drain(..) {
                if seen.insert(k) {
                    keys.push(k);
                }
            }
        }
        Ok(())
    }

    /// The result of `t` (the run ahead of transaction `tx`) when it is still the result of
    /// running `tx` now: every account and slot it read holds the value it read. The coinbase's
    /// balance may differ (each transaction's fee raised it since) when the run aimed no opcode
    /// at the coinbase and the coinbase neither sends nor receives the transaction: then the
    /// run's fee is added to the balance the coinbase has now.
    fn still_holds(&self, t: Trial, tx: &[u8], env: &TxEnv) -> Option<ResultAndState> {
        if t.tx != tx {
            return None;
        }
        let db = self.evm.ctx.db();
        let coinbase = self.evm.ctx.block.beneficiary;
        let mut coinbase_moved: Option<(U256, U256)> = None;
        for read in &t.reads {
            match *read {
                Read::Account(a, then) => {
                    let now = db.peek_account(&a)?;
                    if now == then {
                        continue;
                    }
                    let blind = !t.eyed_coinbase && env.caller != coinbase && env.kind.to() != Some(&coinbase);
                    match (then, now) {
                        (Some((n0, b0, h0)), Some((n1, b1, h1))) if a == coinbase && blind && n0 == n1 && h0 == h1 => {
                            coinbase_moved = Some((b0, b1));
                        }
                        _ => return None,
                    }
                }
                Read::Slot(a, k, then) => {
                    if db.peek_slot(&a, &k)? != then {
                        return None;
                    }
                }
            }
        }
        let mut rs = t.rs;
        if let Some((then, now)) = coinbase_moved {
            let acc = rs.state.get_mut(&coinbase)?;
            acc.info.balance = acc.info.balance.checked_sub(then)?.checked_add(now)?;
        }
        Some(rs)
    }

    /// Runs one transaction over the committed state, what it lacks recorded afresh in the db.
    fn transact(&mut self, env: TxEnv) -> std::result::Result<revm::context::result::ResultAndState, EVMError<Unresolvable>> {
        let db = self.evm.ctx.db_mut();
        db.lacking.clear();
        db.lacking_set.clear();
        self.evm.transact(env)
    }

    /// Ends the batch's answer (DEFERRED at `deferred`, or BATCH_END) with its changes.
    fn end_batch(&mut self, out: &mut Vec<u8>, deferred: Option<u32>) {
        match deferred {
            Some(i) => {
                out.push(DEFERRED);
                out.extend_from_slice(&i.to_le_bytes());
            }
            None => out.push(BATCH_END),
        }
        self.ahead_left = None;
        self.trials.clear();
        let db = self.evm.ctx.db_mut();
        self.batch.write(out, db);
    }
}

/// What a batch changed so far: per account, in the order the batch first changed it.
#[derive(Default)]
struct BatchChanges {
    order: Vec<Address>,
    accounts: HashMap<Address, BatchAccount>,
}

#[derive(Default)]
struct BatchAccount {
    /// Its storage was wiped in the batch (destroyed or created): JS clears it before the slots.
    cleared: bool,
    /// The code a creation in the batch deployed.
    code: Option<Bytes>,
    /// Slots written (their final values are the committed state's), in first-write order.
    slots: Vec<U256>,
    slot_set: HashSet<U256>,
}

impl BatchChanges {
    /// Folds one executed transaction's changes in.
    fn absorb(&mut self, changes: &[Change<'_>]) {
        for c in changes {
            let e = match self.accounts.entry(c.address) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    self.order.push(c.address);
                    v.insert(BatchAccount::default())
                }
            };
            if c.deleted || c.created {
                e.cleared = true;
                e.code = None;
                e.slots.clear();
                e.slot_set.clear();
            }
            if let Some(code) = c.code {
                e.code = Some(code.original_bytes());
            }
            for (k, _) in &c.slots {
                if e.slot_set.insert(*k) {
                    e.slots.push(*k);
                }
            }
        }
    }

    /// Writes every changed account as the committed state `db` now holds it, and starts over.
    fn write(&mut self, out: &mut Vec<u8>, db: &WitnessDb) {
        out.extend_from_slice(&(self.order.len() as u32).to_le_bytes());
        for address in self.order.drain(..) {
            let e = self.accounts.remove(&address).unwrap_or_default();
            match db.accounts.get(&address) {
                Some(Some(info)) => {
                    let held = db.storage.get(&address);
                    let slots: Vec<(U256, U256)> = e
                        .slots
                        .iter()
                        .map(|k| (*k, held.and_then(|m| m.get(k)).copied().unwrap_or_default()))
                        .collect();
                    let code = e.code.as_ref().map(|b| &b[..]).filter(|_| info.code_hash != KECCAK_EMPTY);
                    put_change(out, &address, false, e.cleared, info, code, &slots);
                }
                _ => put_change(out, &address, true, false, &AccountInfo::default(), None, &[]),
            }
        }
        self.accounts.clear();
    }
}

/// An executed transaction's answer after its kind byte: success u8, gas used u64, refund u64,
/// has-created u8 and the created address (20), log count u32, per log address (20), topic
/// count u8, topics (32 each), data length u32 and data; then, when there are logs, their logs
/// bloom (256: hashed here, where it costs a fraction of what hashing each address and topic
/// in a call of its own from JS does).
fn write_outcome(out: &mut Vec<u8>, result: &ExecutionResult, create_address: Option<Address>) {
    out.push(u8::from(result.is_success()));
    let gas = result.gas();
    out.extend_from_slice(&result.tx_gas_used().to_le_bytes());
    out.extend_from_slice(&gas.final_refunded().to_le_bytes());
    let created = match result {
        ExecutionResult::Success { output: Output::Create(_, Some(a)), .. } => Some(*a),
        _ => create_address,
    };
    match created {
        Some(a) => {
            out.push(1);
            out.extend_from_slice(a.as_slice());
        }
        None => out.push(0),
    }
    let logs = result.logs();
    out.extend_from_slice(&(logs.len() as u32).to_le_bytes());
    for log in logs {
        out.extend_from_slice(log.address.as_slice());
        let topics = log.data.topics();
        out.push(topics.len() as u8);
        for t in topics {
            out.extend_from_slice(t.as_slice());
        }
        out.extend_from_slice(&(log.data.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&log.data.data);
    }
    if !logs.is_empty() {
        let mut bloom = Bloom::ZERO;
        bloom.accrue_logs(logs);
        out.extend_from_slice(bloom.as_slice());
    }
}

/// Account change flags.
const DELETED: u8 = 1;
const CREATED: u8 = 2;
const HAS_CODE: u8 = 4;

/// True when the account goes at the end of the transaction: destroyed, or touched and empty (EIP-161).
fn goes(acc: &revm::state::Account) -> bool {
    acc.is_selfdestructed() || acc.is_empty()
}

/// What one transaction did to one account (as the reference journal would write it).
struct Change<'a> {
    address: Address,
    /// Destroyed, or touched and left empty (EIP-161).
    deleted: bool,
    /// Made in this transaction: its storage starts empty.
    created: bool,
    info: &'a AccountInfo,
    /// The code a creation deployed.
    code: Option<&'a Bytecode>,
    /// Slots written, with their new values (a zero in an account not created deletes).
    slots: Vec<(U256, U256)>,
}

impl Change<'_> {
    /// A write the tree can only make with a node no read brought in (the sibling a deletion
    /// collapses into): JS prepares those per transaction, so a batch leaves them to it.
    fn deletes(&self) -> bool {
        self.deleted || (!self.created && self.slots.iter().any(|(_, v)| v.is_zero()))
    }
}

/// Every account the transaction changed, against the committed state in `db`.
fn account_changes<'a>(state: &'a EvmState, db: &WitnessDb) -> Vec<Change<'a>> {
    let mut out = Vec::new();
    for (address, acc) in state.iter() {
        if !acc.is_touched() {
            continue;
        }
        let created = acc.is_created();
        if goes(acc) {
            out.push(Change { address: *address, deleted: true, created, info: &acc.info, code: None, slots: Vec::new() });
            continue;
        }
        let slots: Vec<(U256, U256)> = acc
            .storage
            .iter()
            .filter(|(_, s)| created || s.is_changed())
            .filter(|(_, s)| !(created && s.present_value.is_zero()))
            .map(|(k, s)| (*k, s.present_value))
            .collect();
        let same = !created
            && slots.is_empty()
            && db.accounts.get(address).and_then(|a| a.as_ref()).is_some_and(|b| {
                b.nonce == acc.info.nonce && b.balance == acc.info.balance && b.code_hash == acc.info.code_hash
            });
        if same {
            continue;
        }
        let code = if created && acc.info.code_hash != KECCAK_EMPTY { acc.info.code.as_ref() } else { None };
        out.push(Change { address: *address, deleted: false, created, info: &acc.info, code, slots });
    }
    out
}

/// One account's change: address (20), flags u8, and unless deleted nonce u64, balance (32),
/// code hash (32), code (length u32 and bytes, when HAS_CODE), slot count u32 and (slot, value) words.
fn put_change(out: &mut Vec<u8>, address: &Address, deleted: bool, created: bool, info: &AccountInfo, code: Option<&[u8]>, slots: &[(U256, U256)]) {
    out.extend_from_slice(address.as_slice());
    if deleted {
        out.push(DELETED);
        return;
    }
    out.push((if created { CREATED } else { 0 }) | (if code.is_some() { HAS_CODE } else { 0 }));
    out.extend_from_slice(&info.nonce.to_le_bytes());
    out.extend_from_slice(&info.balance.to_be_bytes::<32>());
    out.extend_from_slice(info.code_hash.as_slice());
    if let Some(bytes) = code {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out.extend_from_slice(&(slots.len() as u32).to_le_bytes());
    for (k, v) in slots {
        out.extend_from_slice(&k.to_be_bytes::<32>());
        out.extend_from_slice(&v.to_be_bytes::<32>());
    }
}

/// Every account the transaction changed: count u32, then each as `put_change` writes it.
fn write_changes(out: &mut Vec<u8>, changes: &[Change<'_>]) {
    out.extend_from_slice(&(changes.len() as u32).to_le_bytes());
    for c in changes {
        put_change(out, &c.address, c.deleted, c.created, c.info, c.code.map(|b| b.original_byte_slice()), &c.slots);
    }
}

fn commit_state(db: &mut WitnessDb, state: EvmState) {
    for (address, acc) in state {
        if !acc.is_touched() {
            continue;
        }
        if goes(&acc) {
            db.accounts.insert(address, None);
            db.storage.remove(&address);
            db.cleared.insert(address);
            continue;
        }
        let mut info = acc.info.clone();
        if let Some(code) = info.code.take() {
            if info.code_hash != KECCAK_EMPTY {
                db.code.entry(info.code_hash).or_insert(code);
                db.code_owner.entry(info.code_hash).or_insert(address);
            }
        }
        db.accounts.insert(address, Some(info));
        let slots = db.storage.entry(address).or_default();
        if acc.is_created() {
            slots.clear();
            db.cleared.insert(address);
        }
        for (k, s) in acc.storage {
            slots.insert(k, s.present_value);
        }
    }
}

/// The fork, configuration and block of an engine's `config` bytes.
fn read_config(config: &[u8]) -> Result<(SpecId, CfgEnv, BlockEnv, bool)> {
    let mut r = Reader::new(config);
    let spec = spec_of(r.u8()?)?;
    let chain_id = r.u64()?;
    let number = r.u64()?;
    let timestamp = r.u64()?;
    let gas_limit = r.u64()?;
    let basefee = r.u64()?;
    let coinbase = r.address()?;
    let report_reads = !r.done() && r.u8()? == 1;
    let mut cfg = CfgEnv::new_with_spec(spec);
    cfg.chain_id = chain_id;
    let mut block = BlockEnv {
        number: U256::from(number),
        beneficiary: coinbase,
        timestamp: U256::from(timestamp),
        gas_limit,
        basefee,
        difficulty: U256::ZERO,
        prevrandao: Some(B256::ZERO),
        ..Default::default()
    };
    // No blob is ever included: the excess blob gas stays 0 and BLOBBASEFEE is 1 wei.
    if spec.is_enabled_in(SpecId::CANCUN) {
        let fraction = if spec.is_enabled_in(SpecId::PRAGUE) { 5_007_716 } else { 3_338_477 };
        block.set_blob_excess_gas_and_price(0, fraction);
    } else {
        block.blob_excess_gas_and_price = None;
    }
    Ok((spec, cfg, block, report_reads))
}

fn read_tx(b: &[u8]) -> Result<(TxEnv, bool)> {
    let mut r = Reader::new(b);
    let tx_type = r.u8()?;
    let caller = r.address()?;
    let has_to = r.u8()? != 0;
    let to = if has_to { Some(r.address()?) } else { None };
    let value = r.word()?;
    let gas_limit = r.u64()?;
    let max_fee = r.u128()?;
    let priority = r.u128()?;
    let nonce = r.u64()?;
    let chain_id = r.u64()?;
    let n = r.u32()? as usize;
    let data = Bytes::copy_from_slice(r.take(n)?);
    let entries = r.u32()? as usize;
    let mut items = Vec::with_capacity(entries);
    for _ in 0..entries {
        let address = r.address()?;
        let keys = r.u32()? as usize;
        let mut storage_keys = Vec::with_capacity(keys);
        for _ in 0..keys {
            storage_keys.push(r.b256()?);
        }
        items.push(AccessListItem { address, storage_keys });
    }
    if !r.done() {
        return Err(bad("trailing bytes after the transaction"));
    }
    let env = TxEnv {
        tx_type,
        caller,
        gas_limit,
        gas_price: max_fee,
        kind: match to {
            Some(a) => TxKind::Call(a),
            None => TxKind::Create,
        },
        value,
        data,
        nonce,
        chain_id: if tx_type == 0 { None } else { Some(chain_id) },
        access_list: AccessList(items),
        gas_priority_fee: if tx_type >= 2 { Some(priority) } else { None },
        ..Default::default()
    };
    Ok((env, to.is_none()))
}

impl Engine {
    /// Records: 1 account (address, nonce u64, balance, code hash), 2 no account (address),
    /// 3 code (hash, length u32, bytes), 4 slot (address, slot, value), 5/6/7 unresolvable
    /// account (address) / slot (address, slot) / code (hash, address), 8 forget an account
    /// (address: JS wrote it), 9 forget everything (code too, and what a batch changed so far),
    /// 10 clear the unresolvable keys,
    /// 11 commit the last executed transaction (as `commit`, without a call of its own).
    fn feed_records(&mut self, b: &[u8]) -> Result<()> {
        let db = self.evm.ctx.db_mut();
        let mut r = Reader::new(b);
        while !r.done() {
            match r.u8()? {
                1 => {
                    let address = r.address()?;
                    let nonce = r.u64()?;
                    let balance = r.word()?;
                    let code_hash = r.b256()?;
                    if code_hash != KECCAK_EMPTY {
                        db.code_owner.entry(code_hash).or_insert(address);
                    }
                    // code None: revm asks code_by_hash when it runs it (AccountInfo's default is empty code).
                    let info = AccountInfo { balance, nonce, code_hash, account_id: None, code: None };
                    db.accounts.insert(address, Some(info));
                }
                2 => {
                    let address = r.address()?;
                    db.accounts.insert(address, None);
                }
                3 => {
                    let hash = r.b256()?;
                    let n = r.u32()? as usize;
                    let code = Bytecode::new_raw(Bytes::copy_from_slice(r.take(n)?));
                    db.code.insert(hash, code);
                }
                4 => {
                    let address = r.address()?;
                    let slot = r.word()?;
                    let value = r.word()?;
                    db.storage.entry(address).or_default().insert(slot, value);
                }
                5 => {
                    let a = r.address()?;
                    db.unresolvable.insert(Key::Account(a));
                }
                6 => {
                    let a = r.address()?;
                    let s = r.word()?;
                    db.unresolvable.insert(Key::Slot(a, s));
                }
                7 => {
                    let h = r.b256()?;
                    let a = r.address()?;
                    db.unresolvable.insert(unresolvable_form(Key::Code(h, a)));
                }
                8 => {
                    let a = r.address()?;
                    db.forget(&a);
                }
                9 => {
                    db.reset();
                    // A batch JS gave up on (it failed on the JS side) is not reported either.
                    self.batch = BatchChanges::default();
                    self.trials.clear();
                }
                10 => db.unresolvable.clear(),
                11 => {
                    if let Some(state) = self.pending.take() {
                        commit_state(db, state);
                    }
                }
                t => return Err(bad(&format!("record tag 1–11, found {t}"))),
            }
        }
        Ok(())
    }
}
