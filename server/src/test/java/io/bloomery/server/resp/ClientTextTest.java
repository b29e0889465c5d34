package io.bloomery.server.resp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Client-chosen text in a reply or log line: control characters escaped, everything else as it is. */
class ClientTextTest {

  @Test
  void controlCharactersAreEscapedAndTheRestStays() {
    assertThat(ClientText.escape("key\u001b[2J\r\nINFO forged line\t\u007f\u009b")).isEqualTo(
        "key\\x1b[2J\\r\\nINFO forged line\\t\\x7f\\x9b");
    assertThat(ClientText.escape("clé-ключ-键 plain")).isEqualTo("clé-ключ-键 plain");
    assertThat(ClientText.escape("")).isEmpty();
  }

  @Test
  void singleBytesArePrintableAsciiOrEscaped() {
    assertThat(ClientText.escape((byte) '+')).isEqualTo("+");
    assertThat(ClientText.escape((byte) 0x1b)).isEqualTo("\\x1b");
    assertThat(ClientText.escape((byte) '\n')).isEqualTo("\\n");
    assertThat(ClientText.escape((byte) 0xe9)).isEqualTo("\\xe9");
  }
}
