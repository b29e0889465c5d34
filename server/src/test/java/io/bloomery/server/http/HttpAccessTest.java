package io.bloomery.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.command.Errors;
import io.bloomery.server.state.Settings;
import io.bloomery.server.state.acl.Acl;
import io.bloomery.server.state.acl.AclCommands;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who passes the HTTP port's guard: the password first, protected mode when there is none. */
class HttpAccessTest {
  private static Request from(String peer, String authorization) throws Exception {
    return new Request("GET", "/", null, authorization, InetAddress.getByName(peer));
  }

  @Test
  void withoutAPassword_protectedModeRefusesPeersNotOnLoopback_only() throws Exception {
    Settings settings = new Settings();
    HttpAccess access = new HttpAccess(settings);
    assertThat(access.refusal(from("127.0.0.1", null))).isNull();
    assertThat(access.refusal(from("127.3.4.5", null))).isNull();
    assertThat(access.refusal(from("::1", null))).isNull();
    for (String remote : new String[] {"192.0.2.7", "10.1.2.3", "2001:db8::1"}) {
      Response refusal = access.refusal(from(remote, null));
      assertThat(refusal.status()).as(remote).isEqualTo(403);
      assertThat(new String(refusal.body(), StandardCharsets.UTF_8)).isEqualTo(Errors.DENIED + "\n");
    }
    assertThat(access.denied()).isEqualTo(3);
    settings.protectedMode(false);
    assertThat(access.refusal(from("192.0.2.7", null))).isNull();
  }

  /**
   * With ACL users, basic authentication names the user: one that may run INFO passes with its own password, one
   * that may not is refused; any other name, and a token, stand for the default user and its password.
   */
  @Test
  void aclUsersPassByNameWhenTheyMayRunInfo() throws Exception {
    Acl acl = new Acl(null);
    acl.requirepass("pw");
    AclCommands commands = new AclCommands();
    commands.add("info", false, false, false, false, "server");
    acl.install(commands.complete());
    assertThat(acl.setUser("ops", List.of("on", ">opw", "+info"))).isNull();
    assertThat(acl.setUser("crawler", List.of("on", ">cpw", "~crawl:*", "+bf.add"))).isNull();
    HttpAccess access = new HttpAccess(new Settings(), acl);
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("ops:opw")))).isNull();
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("ops:pw"))).status()).isEqualTo(401);
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("crawler:cpw"))).status()).isEqualTo(401);
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("anyone:pw")))).isNull();
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("default:pw")))).isNull();
    assertThat(access.refusal(from("127.0.0.1", "Bearer pw"))).isNull();
    assertThat(access.refusal(from("127.0.0.1", "Bearer opw")).status()).isEqualTo(401);
    assertThat(acl.setUser("ops", List.of("off"))).isNull();
    assertThat(access.refusal(from("127.0.0.1", "Basic " + b64("ops:opw"))).status()).isEqualTo(401);
  }

  @Test
  void withAPassword_everyPeerNeedsIt_andProtectedModeIsNotAsked() throws Exception {
    Settings settings = new Settings();
    settings.requirepass("pw");
    HttpAccess access = new HttpAccess(settings);
    for (String peer : new String[] {"127.0.0.1", "192.0.2.7"}) {
      Response refusal = access.refusal(from(peer, null));
      assertThat(refusal.status()).as(peer).isEqualTo(401);
      assertThat(refusal.headers()).containsEntry("WWW-Authenticate", "Basic realm=\"bloomery\", charset=\"UTF-8\"");
      assertThat(access.refusal(from(peer, "Bearer pw"))).as(peer).isNull();
      assertThat(access.refusal(from(peer, "Bearer wrong")).status()).as(peer).isEqualTo(401);
    }
    assertThat(access.denied()).isZero();
  }

  @Test
  void authorizationHeader_hostileFormsOfferNoPassword() {
    assertThat(HttpAccess.offeredPassword(null)).isNull();
    assertThat(HttpAccess.offeredPassword("")).isNull();
    assertThat(HttpAccess.offeredPassword("Basic")).isNull();
    assertThat(HttpAccess.offeredPassword("Basic !!!")).isNull();
    assertThat(HttpAccess.offeredPassword("Basic " + b64("no-colon"))).isNull();
    assertThat(HttpAccess.offeredPassword("Digest abc")).isNull();
    assertThat(HttpAccess.offeredPassword("Basic " + b64("user:pa:ss"))).isEqualTo("pa:ss");
    assertThat(HttpAccess.offeredPassword("basic " + b64(":"))).isEmpty();
    assertThat(HttpAccess.offeredPassword("  Bearer   tok  ")).isEqualTo("tok");
    assertThat(HttpAccess.offeredPassword("Basic " + "A".repeat(100_000))).isNull(); // long, decodes to no "user:password"
  }

  private static String b64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }
}
