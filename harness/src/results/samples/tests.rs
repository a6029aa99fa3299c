use super::*;

const HEAD: &str = "schema_version,case_key,lane,series,index,t_ms,value\n";

fn read(text: &str) -> Result<Samples, Error> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.samples.csv");
    std::fs::write(&p, text).unwrap();
    Samples::read(&p)
}

/// The streamed file may be larger than a whole-file read allows (a real 100 000-row run's
/// samples are 3.7 GB), but a "line" that runs on for a whole block is refused at once.
#[test]
#[cfg_attr(
    windows,
    ignore = "set_len allocates the whole GiB on Windows (not sparse)"
)]
fn a_file_over_a_gibibyte_is_read_and_a_line_without_end_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.samples.csv");
    std::fs::write(&p, format!("{HEAD}1,k1,h2d,bw_gbs,0,,50.5\n")).unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    // Sparse: no disk used; everything after the first line is NUL bytes without a line end.
    f.set_len(crate::input::SAMPLES_CSV.max_bytes + 1).unwrap();
    let e = Samples::read(&p).unwrap_err().to_string();
    assert!(e.contains("line 3 runs on for more than 16 MiB"), "{e}");
    assert!(!e.contains("at most"), "{e}");
}

#[test]
fn keeps_bandwidth_and_timelines_and_drops_the_rest() {
    let s = read(&format!(
        "{HEAD}1,k1,h2d,bw_gbs,0,,50.5\r\n1,\"k\"\"q\",h2d,bw_gbs,0,,4\n1,k1,h2d,phase:nvml.used,alloc,,7\n1,\"k,2\",d2h,bw_gbs,0,,3\n\n1,k1,h2d,bw_gbs,1,,51\n1,k1,h2d,timeline:procfs.rss,0,1.5,9\n1,k1,h2d,timeline:procfs.rss,1,,9"
    ))
    .unwrap();
    assert_eq!(s.bandwidth("k1", Lane::H2d), [50.5, 51.0]);
    assert_eq!(s.bandwidth("k,2", Lane::D2h), [3.0]);
    assert_eq!(s.bandwidth("k\"q", Lane::H2d), [4.0]);
    assert!(s.bandwidth("k1", Lane::D2h).is_empty());
    assert_eq!(s.bandwidth_count(), 4);
    let t: Vec<_> = s.timelines().collect();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].1["procfs.rss"].points, vec![(1.5, 9.0)]);
    assert!(s.before("k1").is_none(), "only the `before` phase is kept");
}

#[test]
fn keeps_the_readings_before_allocation() {
    let s = read(&format!(
        "{HEAD}1,k1,,phase:cuda.used,before,3.5,100\n1,k1,,phase:cuda.used,alloc,4.5,900\n1,k1,,phase:procfs.vm_rss,before,3.5,7\n"
    ))
    .unwrap();
    let b = s.before("k1").expect("baseline kept");
    assert_eq!(b.len(), 2);
    assert_eq!(b["cuda.used"], 100.0);
    assert_eq!(b["procfs.vm_rss"], 7.0);
}

#[test]
fn errors_name_the_line() {
    let cases = [
        (
            format!("{HEAD}1,k,h2d,bw_gbs,0,,1\n1,k,h2d,bw_gbs,1,,fast\n"),
            "line 3: value `fast` is not a number",
        ),
        (
            format!("{HEAD}1,k,h2d,bw_gbs,0,,1\n2,k,h2d,phase:x,a,,1\n"),
            "line 3: schema_version `2`",
        ),
        (
            format!("{HEAD}1,k,h2d,bw_gbs,0,1\n"),
            "line 2: it has 6 fields, the header has 7",
        ),
        (
            format!("{HEAD}1,\"k\nx\",h2d,bw_gbs,0,,1\n"),
            "line 2: a quoted field",
        ),
        (
            format!("{HEAD}1,\"k\"x,h2d,bw_gbs,0,,1\n"),
            "line 2: it has text after a quoted",
        ),
        ("a,b\n".to_string(), "no `schema_version` column"),
    ];
    for (text, says) in cases {
        let e = read(&text).unwrap_err().to_string();
        assert!(e.contains(says), "{text:?}: {e}");
    }
}

#[test]
fn many_blocks_give_what_one_block_gives() {
    // Lines well past one piece and one block: order kept, line numbers counted across.
    let mut text = String::from(HEAD);
    let n = 3 * BLOCK_BYTES / 40;
    for i in 0..n {
        let k = i % 7;
        text.push_str(&format!("1,key{k},h2d,bw_gbs,{i},,{i}\n"));
    }
    let s = read(&text).unwrap();
    assert_eq!(s.bandwidth_count(), n);
    let k3 = s.bandwidth("key3", Lane::H2d);
    assert!(k3.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(k3[0], 3.0);
    text.push_str("1,key0,h2d,bw_gbs,x,,oops\n");
    let e = read(&text).unwrap_err().to_string();
    assert!(e.contains(&format!("line {}: value `oops`", n + 2)), "{e}");
}
