//! A small expression language for shape rules and roofline formulas.
//!
//! Integers and floats with `+ - * / %`, comparisons, `&&`, `||`, `!`, parentheses,
//! `x in [a, b, c]`, boolean literals and a conditional `c ? a : b`. Names are looked up in
//! an environment (workload dimensions and params). Parsing happens at load time, so a bad
//! expression is a load error, never a panic at use.

use std::collections::BTreeMap;
use std::fmt;

/// A value: integer, float or boolean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl Val {
    fn num(self) -> Result<f64, String> {
        match self {
            Val::Int(i) => Ok(i as f64),
            Val::Float(f) => Ok(f),
            Val::Bool(b) => Err(format!("expected a number, got {b}")),
        }
    }

    /// The value as a float (booleans are an error).
    pub fn as_f64(self) -> Result<f64, String> {
        self.num()
    }

    /// The value as a boolean (numbers are an error).
    pub fn as_bool(self) -> Result<bool, String> {
        match self {
            Val::Bool(b) => Ok(b),
            other => Err(format!("expected a boolean, got {other}")),
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(i) => write!(f, "{i}"),
            Val::Float(x) => write!(f, "{x}"),
            Val::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Names and their values.
pub type Env = BTreeMap<String, Val>;

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Lit(Val),
    Var(String),
    Neg(Box<Node>),
    Not(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    In(Box<Node>, Vec<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    text: String,
    root: Node,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Val),
    Ident(String),
    Sym(&'static str),
}

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, String> {
    const SYMS: [&str; 20] = [
        "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "!", "(", ")", "[",
        "]", ",", "?",
    ];
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'_')
            {
                // Exponent sign: `1e-3`.
                if (bytes[i] == b'e' || bytes[i] == b'E')
                    && matches!(bytes.get(i + 1), Some(b'-' | b'+'))
                {
                    i += 1;
                }
                i += 1;
            }
            let s = text[start..i].replace('_', "");
            let val = if s.contains(['.', 'e', 'E']) {
                s.parse::<f64>()
                    .map(Val::Float)
                    .map_err(|_| format!("bad number `{s}` at {start}"))?
            } else {
                s.parse::<i64>()
                    .map(Val::Int)
                    .map_err(|_| format!("bad number `{s}` at {start}"))?
            };
            out.push((start, Tok::Num(val)));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, Tok::Ident(text[start..i].to_string())));
        } else if c == b':' {
            out.push((i, Tok::Sym(":")));
            i += 1;
        } else if let Some(sym) = SYMS.iter().find(|s| text[i..].starts_with(**s)) {
            out.push((i, Tok::Sym(sym)));
            i += sym.len();
        } else {
            return Err(format!(
                "unexpected character `{}` at {i}",
                text[i..].chars().next().unwrap_or('?')
            ));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    depth: usize,
}

/// Nesting deeper than this is refused: no real formula needs it, and it bounds recursion.
const MAX_DEPTH: usize = 64;

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }
    fn at(&self) -> String {
        self.toks
            .get(self.pos)
            .map(|(p, _)| format!("at {p}"))
            .unwrap_or_else(|| "at end".into())
    }
    fn is_sym(&self, sym: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(s)) if *s == sym)
    }
    fn eat(&mut self, sym: &str) -> bool {
        if self.is_sym(sym) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, sym: &str) -> Result<(), String> {
        if self.eat(sym) {
            Ok(())
        } else {
            Err(format!("expected `{sym}` {}", self.at()))
        }
    }
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("expression nests deeper than {MAX_DEPTH}"));
        }
        Ok(())
    }
    fn cond(&mut self) -> Result<Node, String> {
        self.enter()?;
        let c = self.binary(0)?;
        let node = if self.eat("?") {
            let a = self.cond()?;
            self.expect(":")?;
            let b = self.cond()?;
            Node::Cond(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth -= 1;
        Ok(node)
    }
    fn binary(&mut self, level: usize) -> Result<Node, String> {
        const LEVELS: [&[(&str, Op)]; 5] = [
            &[("||", Op::Or)],
            &[("&&", Op::And)],
            &[
                ("==", Op::Eq),
                ("!=", Op::Ne),
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("<", Op::Lt),
                (">", Op::Gt),
            ],
            &[("+", Op::Add), ("-", Op::Sub)],
            &[("*", Op::Mul), ("/", Op::Div), ("%", Op::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            if level == 2 && matches!(self.peek(), Some(Tok::Ident(w)) if w == "in") {
                self.pos += 1;
                self.expect("[")?;
                let mut items = vec![self.cond()?];
                while self.eat(",") {
                    items.push(self.cond()?);
                }
                self.expect("]")?;
                lhs = Node::In(Box::new(lhs), items);
                continue;
            }
            let Some(op) = LEVELS[level].iter().find(|(s, _)| self.is_sym(s)) else {
                return Ok(lhs);
            };
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = Node::Bin(op.1, Box::new(lhs), Box::new(rhs));
        }
    }
    fn unary(&mut self) -> Result<Node, String> {
        self.enter()?;
        let node = if self.eat("-") {
            Node::Neg(Box::new(self.unary()?))
        } else if self.eat("!") {
            Node::Not(Box::new(self.unary()?))
        } else if self.eat("(") {
            let e = self.cond()?;
            self.expect(")")?;
            e
        } else {
            match self.toks.get(self.pos).cloned() {
                Some((_, Tok::Num(v))) => {
                    self.pos += 1;
                    Node::Lit(v)
                }
                Some((_, Tok::Ident(name))) => {
                    self.pos += 1;
                    match name.as_str() {
                        "true" => Node::Lit(Val::Bool(true)),
                        "false" => Node::Lit(Val::Bool(false)),
                        _ => Node::Var(name),
                    }
                }
                _ => return Err(format!("expected a value {}", self.at())),
            }
        };
        self.depth -= 1;
        Ok(node)
    }
}

impl Expr {
    /// Parses `text`.
    ///
    /// # Errors
    /// Where and why the text is not a valid expression.
    pub fn parse(text: &str) -> Result<Self, String> {
        let toks = lex(text)?;
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
        };
        let root = p.cond()?;
        if p.pos != p.toks.len() {
            return Err(format!("unexpected input {}", p.at()));
        }
        Ok(Self {
            text: text.to_string(),
            root,
        })
    }

    /// The names the expression reads.
    pub fn names(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            match n {
                Node::Lit(_) => {}
                Node::Var(v) => out.push(v.clone()),
                Node::Neg(a) | Node::Not(a) => walk(a, out),
                Node::Bin(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::In(a, items) => {
                    walk(a, out);
                    items.iter().for_each(|i| walk(i, out));
                }
                Node::Cond(c, a, b) => {
                    walk(c, out);
                    walk(a, out);
                    walk(b, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// Evaluates the expression in `env`.
    ///
    /// # Errors
    /// An unknown name, a type mismatch, a division by zero or an integer overflow.
    pub fn eval(&self, env: &Env) -> Result<Val, String> {
        eval(&self.root, env)
    }
}

fn eval(n: &Node, env: &Env) -> Result<Val, String> {
    Ok(match n {
        Node::Lit(v) => *v,
        Node::Var(name) => *env
            .get(name)
            .ok_or_else(|| format!("unknown name `{name}`"))?,
        Node::Neg(a) => match eval(a, env)? {
            Val::Int(i) => Val::Int(i.checked_neg().ok_or("integer overflow")?),
            Val::Float(f) => Val::Float(-f),
            Val::Bool(_) => return Err("cannot negate a boolean".into()),
        },
        Node::Not(a) => Val::Bool(!eval(a, env)?.as_bool()?),
        Node::Cond(c, a, b) => {
            if eval(c, env)?.as_bool()? {
                eval(a, env)?
            } else {
                eval(b, env)?
            }
        }
        Node::In(a, items) => {
            let x = eval(a, env)?;
            let mut found = false;
            for item in items {
                if equal(x, eval(item, env)?)? {
                    found = true;
                }
            }
            Val::Bool(found)
        }
        Node::Bin(Op::And, a, b) => Val::Bool(eval(a, env)?.as_bool()? && eval(b, env)?.as_bool()?),
        Node::Bin(Op::Or, a, b) => Val::Bool(eval(a, env)?.as_bool()? || eval(b, env)?.as_bool()?),
        Node::Bin(op, a, b) => arith(*op, eval(a, env)?, eval(b, env)?)?,
    })
}

fn equal(a: Val, b: Val) -> Result<bool, String> {
    match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => Ok(x == y),
        (Val::Int(x), Val::Int(y)) => Ok(x == y),
        (x, y) => Ok(x.num()? == y.num()?),
    }
}

fn arith(op: Op, a: Val, b: Val) -> Result<Val, String> {
    use Op::*;
    if let (Val::Int(x), Val::Int(y)) = (a, b) {
        let overflow = || format!("integer overflow in {x} {op:?} {y}");
        return Ok(match op {
            Add => Val::Int(x.checked_add(y).ok_or_else(overflow)?),
            Sub => Val::Int(x.checked_sub(y).ok_or_else(overflow)?),
            Mul => Val::Int(x.checked_mul(y).ok_or_else(overflow)?),
            // Integer division stays exact when it divides, else becomes a float: rooflines
            // like `flops / 2` must not truncate.
            Div if y == 0 => return Err("division by zero".into()),
            Div if x % y == 0 => Val::Int(x / y),
            Div => Val::Float(x as f64 / y as f64),
            Rem if y == 0 => return Err("modulo by zero".into()),
            Rem => Val::Int(x.rem_euclid(y)),
            Eq => Val::Bool(x == y),
            Ne => Val::Bool(x != y),
            Lt => Val::Bool(x < y),
            Le => Val::Bool(x <= y),
            Gt => Val::Bool(x > y),
            Ge => Val::Bool(x >= y),
            And | Or => unreachable!("handled by eval"),
        });
    }
    if matches!(op, Eq | Ne) {
        let e = equal(a, b)?;
        return Ok(Val::Bool(if op == Eq { e } else { !e }));
    }
    let (x, y) = (a.num()?, b.num()?);
    Ok(match op {
        Add => Val::Float(x + y),
        Sub => Val::Float(x - y),
        Mul => Val::Float(x * y),
        Div if y == 0.0 => return Err("division by zero".into()),
        Div => Val::Float(x / y),
        Rem if y == 0.0 => return Err("modulo by zero".into()),
        Rem => Val::Float(x.rem_euclid(y)),
        Lt => Val::Bool(x < y),
        Le => Val::Bool(x <= y),
        Gt => Val::Bool(x > y),
        Ge => Val::Bool(x >= y),
        Eq | Ne | And | Or => unreachable!("handled above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        [
            ("B", Val::Int(2)),
            ("H", Val::Int(32)),
            ("Hkv", Val::Int(8)),
            ("causal", Val::Bool(true)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn ev(s: &str) -> Result<Val, String> {
        Expr::parse(s)?.eval(&env())
    }

    #[test]
    fn arithmetic_and_precedence() {
        assert_eq!(ev("1 + 2 * 3").unwrap(), Val::Int(7));
        assert_eq!(ev("(1 + 2) * 3").unwrap(), Val::Int(9));
        assert_eq!(ev("4*B*H / (causal ? 2 : 1)").unwrap(), Val::Int(128));
        assert_eq!(ev("7 / 2").unwrap(), Val::Float(3.5));
        assert_eq!(ev("2.5 * 2").unwrap(), Val::Float(5.0));
        assert_eq!(ev("-H % 5").unwrap(), Val::Int(3));
        assert_eq!(ev("1e3 * 2").unwrap(), Val::Float(2000.0));
    }

    #[test]
    fn rules() {
        assert_eq!(ev("H % Hkv == 0").unwrap(), Val::Bool(true));
        assert_eq!(ev("Hkv in [32, 64, 96]").unwrap(), Val::Bool(false));
        assert_eq!(
            ev("H in [32, 64] && !causal || B >= 2").unwrap(),
            Val::Bool(true)
        );
    }

    #[test]
    fn errors_are_values_not_panics() {
        assert!(Expr::parse("1 +").unwrap_err().contains("expected a value"));
        assert!(
            Expr::parse("H $ 2")
                .unwrap_err()
                .contains("unexpected character `$`")
        );
        assert!(Expr::parse("(1").unwrap_err().contains("expected `)`"));
        assert!(Expr::parse("1 2").unwrap_err().contains("unexpected input"));
        assert!(
            Expr::parse(&"(".repeat(500))
                .unwrap_err()
                .contains("nests deeper")
        );
        assert_eq!(ev("Q + 1").unwrap_err(), "unknown name `Q`");
        assert_eq!(ev("H / 0").unwrap_err(), "division by zero");
        assert!(
            ev("9223372036854775807 + 1")
                .unwrap_err()
                .contains("overflow")
        );
        assert!(ev("causal + 1").unwrap_err().contains("expected a number"));
        assert!(ev("H ? 1 : 2").unwrap_err().contains("expected a boolean"));
    }

    #[test]
    fn names_are_listed() {
        let e = Expr::parse("4*B*H*Sq / (causal ? 2 : 1)").unwrap();
        assert_eq!(e.names(), vec!["B", "H", "Sq", "causal"]);
    }
}
