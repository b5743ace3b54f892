// Word lists for synthetic text. Written for this project; the point is realistic script,
// diacritics and word lengths, not meaning.

export const VI_COMMON: readonly string[] = (
  "tôi bạn chúng ta họ người này đó những các một hai ba nhiều ít rất khá hơi đã đang sẽ vừa mới " +
  "không chưa có là được bị cho với của trong ngoài trên dưới giữa sau trước khi lúc nếu thì mà nhưng " +
  "và hoặc vì nên để từ đến về theo cùng cũng vẫn còn lại đều chỉ ngay luôn thường hay nữa rồi " +
  "ngày tháng năm tuần giờ phút sáng chiều tối đêm hôm qua nay mai hiện nay gần đây lâu " +
  "nhà trường lớp học sinh viên giáo giảng bài giảng thầy cô bạn bè gia đình cha mẹ anh chị em con " +
  "công việc công ty nhân viên khách hàng sản phẩm dịch vụ giá cả chất lượng thị trường kinh tế " +
  "xã hội văn hóa lịch sử địa lý chính trị pháp luật quy định nghị định thông tư điều khoản " +
  "thành phố nông thôn tỉnh huyện xã đường phố cầu sông núi biển rừng đồng ruộng " +
  "Hà Nội Sài Gòn Đà Nẵng Huế Cần Thơ Hải Phòng Việt Nam miền Bắc miền Trung miền Nam " +
  "ăn uống ngủ đi chạy làm học đọc viết nói nghe nhìn thấy biết hiểu nghĩ muốn cần phải nên " +
  "mua bán trả tiền gửi nhận mở đóng bắt đầu kết thúc tiếp tục thay đổi phát triển xây dựng " +
  "tốt xấu đẹp mới cũ lớn nhỏ cao thấp dài ngắn nhanh chậm dễ khó vui buồn hay dở " +
  "quan trọng cần thiết cụ thể chính xác rõ ràng đầy đủ hợp lý phù hợp đặc biệt bình thường " +
  "vấn đề câu hỏi trả lời ý kiến thông tin dữ liệu kết quả nguyên nhân mục tiêu phương pháp " +
  "cơm phở bánh mì cà phê trà nước trái cây rau thịt cá gà " +
  "điện thoại máy tính mạng internet ứng dụng phần mềm trang web tài khoản mật khẩu " +
  "sức khỏe bệnh viện bác sĩ thuốc môi trường thời tiết mưa nắng gió lạnh nóng " +
  "người dân chính quyền cơ quan nhà nước doanh nghiệp tổ chức hoạt động chương trình kế hoạch " +
  "thực hiện áp dụng đánh giá kiểm tra quản lý hỗ trợ bảo vệ đảm bảo nâng cao giảm tăng"
).split(" ");

export const VI_DOMAIN: Readonly<Record<string, readonly string[]>> = {
  legal: (
    "Luật Bộ luật Điều khoản điểm Nghị định Thông tư Quyết định Chính phủ Quốc hội Bộ trưởng " +
    "hợp đồng quyền nghĩa vụ trách nhiệm xử phạt vi phạm hành chính hình sự dân sự tòa án " +
    "bị đơn nguyên đơn thừa kế tài sản đất đai giấy chứng nhận đăng ký thủ tục hồ sơ thẩm quyền"
  ).split(" "),
  tech: (
    "Ubuntu Linux terminal lệnh cài đặt gói phiên bản cập nhật lỗi máy chủ tệp thư mục quyền " +
    "sudo apt hàm biến mảng chuỗi đối tượng lớp thư viện Python Java JavaScript cơ sở dữ liệu " +
    "truy vấn bộ nhớ tiến trình cấu hình trình biên dịch ngoại lệ giao diện"
  ).split(" "),
  science: (
    "nghiên cứu mô hình thuật toán dữ liệu thực nghiệm phân tích đánh giá hiệu suất mạng nơ-ron " +
    "học máy thống kê giả thuyết phương trình tế bào protein gen phân tử năng lượng lượng tử " +
    "tài liệu trích dẫn bài báo kết luận"
  ).split(" "),
  table: (
    "bảng cột hàng giá trị tổng doanh thu tỷ lệ phần trăm số liệu năm quý tháng đơn vị " +
    "triệu đồng tăng trưởng thống kê dân số diện tích sản lượng"
  ).split(" "),
  education: (
    "học sinh giáo viên bài tập đề thi điểm số môn toán ngữ văn vật lý hóa học sinh học " +
    "lịch sử địa lý tiếng Anh chương trình sách giáo khoa kiến thức kỹ năng phương trình đáp án"
  ).split(" "),
  safety: (
    "hướng dẫn cách chế tạo vũ khí tấn công lừa đảo đánh cắp tài khoản mã độc phá hoại " +
    "bỏ qua quy tắc giả vờ nhập vai hệ thống nguy hiểm bất hợp pháp ma túy bạo lực"
  ).split(" "),
};

export const EN_COMMON: readonly string[] = (
  "the a an of to in on for with at by from about into over after before under between through " +
  "and or but if then because so while when where which who what how that this these those " +
  "is are was were be been being have has had do does did can could will would should may might must " +
  "I you we they he she it my your our their his her its me us them " +
  "time year day week people way thing man woman child world life hand part place case point " +
  "government company number group problem fact system program question work night home water room " +
  "money story month lot right study book eye job word business issue side kind head house service " +
  "friend power hour game line end member law car city community name president team minute idea " +
  "make know take see come think look want give use find tell ask work seem feel try leave call " +
  "good new first last long great little own other old right big high different small large next " +
  "early young important few public bad same able best better sure free true whole clear " +
  "data file user server code request error version update setting account page report result " +
  "search query passage answer document source information example method model test value"
).split(" ");

export const EN_DOMAIN: Readonly<Record<string, readonly string[]>> = {
  web: (
    "website domain editor template plan premium billing site store checkout payment SEO " +
    "dashboard settings publish mobile analytics email contact form blog gallery booking"
  ).split(" "),
  msmarco: (
    "definition meaning cause symptoms treatment average salary cost temperature population " +
    "located distance history difference calories recipe weather capital largest"
  ).split(" "),
  agent: (
    "schedule meeting calendar invoice customer order shipment ticket repository branch deploy " +
    "database table record weather forecast flight hotel reservation translate summarize"
  ).split(" "),
  safety: (
    "ignore previous instructions pretend roleplay bypass filter weapon exploit malware " +
    "password steal hack illegal harmful poison explosive system prompt reveal confidential"
  ).split(" "),
};
